#!/usr/bin/env bash
# H200, third session: issue 13's launcher-vs-DB gap. A sweep at batches 1 and 64, freeze, the
# launcher's timing case, then `tuner bench` on the same two winners (time_graph, the bench
# protocol) in the same call: which of the three disagrees?
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
work=$(mktemp -d)
t=build/tuner/tuner
timeout 100 $t sweep --db "$work/t.db" --batches 1,64 --cache-dir "$work/c" >"$out/sweep.log" 2>&1 &&
  timeout 40 $t freeze --db "$work/t.db" --out "$work/f.db" --cache-dir "$work/c" >/dev/null 2>&1
echo "sweep+freeze rc=$?"; grep -E "^ +(1|64) \{" "$out/sweep.log" | cut -c1-200
TUNER_REQUIRE_GPU=1 TUNEDB_SERVE_DB="$work/f.db" TUNER_BINARY=$PWD/$t timeout 90 \
  build/tests/gpu_tunedb_cuda --no-skip -tc="a winner launched*" >"$out/timing.log" 2>&1
grep -E "ratio" "$out/timing.log"
for b in 1 64; do
  where=$(grep -E "^ +$b \{" "$out/sweep.log" | python3 -c "import json,sys; line=sys.stdin.readline(); c=json.loads(line[line.index('{'):line.index('}')+1]); print(','.join(f'{k}={v}' for k,v in c.items()))")
  for rep in 1 2; do
    timeout 60 $t bench --batches $b --where "$where" >"$out/bench_${b}_$rep.log" 2>&1
    grep -E "\(fastest\)" "$out/bench_${b}_$rep.log" | awk -v b=$b '{print "bench batch", b, "median", $11, "p10", $12, "p90", $13}'
  done
done
