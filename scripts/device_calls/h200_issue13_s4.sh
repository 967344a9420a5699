#!/usr/bin/env bash
# H200, issue 13 (fourth session): which factor moves a launched winner's time off its DB median?
# In one call (~2-3 min of device time, nothing built here):
#   1. `tuner sweep --batches 1,64` + `tuner freeze` (the sweep now times the tuner's launch with
#      its partials in the serving launcher's workspace layout: every candidate is still verified
#      against the reference, so "wrong results 0" in the sweep log checks the new layout);
#   2. gpu_tunedb_cuda's timing case (a winner launched by the launcher within 3 % of its median);
#   3. gpu_tunedb_cuda_factors on the swept DB: the tuner's launch and the launcher write the same
#      bits, then the diagnostic that times, in one process with one protocol and interleaved
#      rounds, a = the launcher on the timing case's inputs, b = launch_decode with the partials in
#      two buffers (the tuner before), c = launch_decode with the partials in the launcher's
#      workspace, d = the launcher on inputs drawn as the sweep draws them, e = launch_decode on
#      the problem's own workspace (the tuner now), f = the family's session (the sweep's path);
#   4. `tuner bench` on the two winners (the tuner's own process, as the third session compared);
#   5. the same-bits case on the hand-made DB (the default environment, as ctest runs it).
# Run from the repository root on the device after
#   source scripts/device_env.sh; source scripts/device_build_link.sh
# (build/ is the carried build, .devcarry/build). Writes $OUT/h200_issue13_s4_summary.txt (the
# table printed last) and $OUT/h200_issue13_s4_logs.tgz.
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
logs=$(mktemp -d)/h200_issue13_s4
work=$(mktemp -d)
mkdir -p "$out" "$logs"
t=$PWD/build/tuner/tuner
export TUNER_REQUIRE_GPU=1 TUNER_BINARY=$t
summary=()
note() { summary+=("$1"); }

run() {  # run NAME TIMEOUT_S COMMAND...: logs it and notes its exit status and doctest counts
  local name=$1 limit=$2
  shift 2
  local began=$SECONDS
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  note "$(printf '%-16s rc=%-3s %4ss %s' "$name" "$rc" "$((SECONDS - began))" \
    "$(grep -hE '^\[doctest\] (test cases|assertions)' "$logs/$name.log" | tr -s ' ' | paste -sd ' ')")"
  return "$rc"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu \
  --format=csv >"$logs/gpu.txt" 2>&1
if run sweep 150 "$t" sweep --db "$work/t.db" --batches 1,64 --cache-dir "$work/c" &&
  run freeze 60 "$t" freeze --db "$work/t.db" --out "$work/f.db" --cache-dir "$work/c"; then
  run timing 90 env TUNEDB_SERVE_DB="$work/f.db" build/tests/gpu_tunedb_cuda --no-skip \
    -tc="a winner launched*"
  run factors 180 env TUNEDB_SERVE_DB="$work/f.db" build/tests/gpu_tunedb_cuda_factors --no-skip
  for b in 1 64; do  # the same winner timed by `tuner bench`, a tuner process of its own
    where=$(grep -E "^ +$b \{" "$logs/sweep.log" | python3 -c "import json,sys; l=sys.stdin.readline(); c=json.loads(l[l.index('{'):l.index('}')+1]); print(','.join(f'{k}={v}' for k,v in c.items()))")
    run "bench_$b" 60 "$t" bench --batches "$b" --where "$where"
  done
fi
run same_bits 120 build/tests/gpu_tunedb_cuda_factors -tc="the tuner's timed launch*"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader >>"$logs/gpu.txt" 2>&1

{
  echo "== h200_issue13_s4 ($(head -2 "$logs/gpu.txt" | tail -1))"
  printf '%s\n' "${summary[@]}"
  grep -hE "wrong results" "$logs/sweep.log" 2>/dev/null | tail -1
  echo "-- winners (batch, config, median)"
  grep -hE "^ +(1|64) \{" "$logs/sweep.log" 2>/dev/null | cut -c1-160
  echo "-- timing case (launcher / DB median)"
  grep -hE "ratio" "$logs/timing.log" 2>/dev/null | sed 's/.*MESSAGE: //'
  echo "-- factors (/DB: over the DB median; /f: over the sweep's own path in this process)"
  grep -hE "factors batch" "$logs/factors.log" 2>/dev/null | sed 's/.*MESSAGE: //'
  echo "-- tuner bench, its own process (batch, median us)"
  for b in 1 64; do
    grep -hE "\(fastest\)" "$logs/bench_$b.log" 2>/dev/null | awk '{print "bench", $1, $11}'
  done
  grep -hE "ERROR|FATAL" "$logs"/*.log 2>/dev/null | head -10
} | tee "$out/h200_issue13_s4_summary.txt"
cp "$out/h200_issue13_s4_summary.txt" "$logs/"
tar -czf "$out/h200_issue13_s4_logs.tgz" -C "$(dirname "$logs")" "$(basename "$logs")"
