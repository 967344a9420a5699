#!/usr/bin/env bash
# Issue 12, third round, on the H200 (~8 min of device time for `all`): the batch search with
# screening (every candidate screened, finalists timed in full), measured against its targets.
#   main     the default sweep over all 51 cudagraph sizes with a fresh cubin cache (cold, target
#            < 120 s; its wall split: plan, worker compile/load, verify, timing = screens + full
#            protocol, search), then the same command again (warm, nothing changed: < 5 s)
#   search   an oracle: every config screened at 12 batches incl. the 11 old defaults (nothing
#            skipped; --screen-replays 6, one protocol for every config), then scripts/regret.py
#            search: the searched winner vs the oracle's best (target <= 2 % at every batch)
#   bucket   the same oracle at 21 batches the sweep did not tune, then scripts/regret.py bucket:
#            the config tunedb's lookup returns there vs the oracle's best (target <= 3 %)
#   tests    (not in `all`: a separate call) TUNER_REQUIRE_GPU=1 gpu_sweep and gpu_measure
# Usage: scripts/h200_issue12_s3.sh [BUILD_DIR] [all|main|search|bucket|tests]
# BUILD_DIR defaults to the carried build (.devcarry/build, linked as build/). A short table is
# printed last; the logs of this call go into $OUT/issue12_s3_logs.tgz (the device returns few
# files); DBs and the cache stay in $WORK (default /tmp/issue12_s3).
set -u
build=${1:-build}
step=${2:-all}
out=${OUT:-/tmp/tuner-out}
# DBs and the cubin cache stay outside $OUT (large), so a later call on the same machine can run
# `search` or `bucket` against the tuned DB of `main`.
work=${WORK:-/tmp/issue12_s3}
mkdir -p "$work" "$out"
if [ -d .devcarry ]; then
  source scripts/device_env.sh >/dev/null
  source scripts/device_build_link.sh >/dev/null
fi
here=$(cd "$(dirname "$0")" && pwd)
tuner="$build/tuner/tuner"
db="$work/tuned.db"
cache="$work/cache"
export TUNEDB_LIBRARY=${TUNEDB_LIBRARY:-$(ls "$build"/db/libtunedb.so* .devcarry/lib/libtunedb.so* 2>/dev/null | head -n 1)}
failed=0
table=()

seconds() { date +%s.%N; }
took() { python3 -c "print(f'{$2 - $1:.1f}')"; }
below() { python3 -c "import sys; sys.exit(0 if $1 < $2 else 1)"; }

# sweep NAME LIMIT_S ARGS...: one tuner sweep into $work, its wall time in $last_s.
sweep() {
  local name=$1 limit=$2 t0 t1
  shift 2
  t0=$(seconds)
  timeout "$limit" "$tuner" sweep --cache-dir "$cache" "$@" >"$work/$name.log" 2>"$work/$name.err"
  local rc=$?
  t1=$(seconds)
  last_s=$(took "$t0" "$t1")
  [ "$rc" -eq 0 ] || { failed=1; table+=("$name: exit $rc after ${last_s} s (limit ${limit} s)"); }
}

run_main() {
  rm -rf "$cache" "$db"
  sweep cold 200 --db "$db"
  local cold=$last_s
  sweep warm 60 --db "$db"
  local warm=$last_s
  table+=("cold sweep, 51 sizes, fresh cache: ${cold} s (target < 120)")
  table+=("  $(grep '^time:' "$work/cold.log")")
  table+=("  $(grep '^protocol:' "$work/cold.log")")
  table+=("  $(grep '^run ' "$work/cold.log" | cut -c1-110)")
  table+=("  $(grep '^batch search:' "$work/cold.log")")
  table+=("warm rerun: ${warm} s (target < 5); $(grep '^time:' "$work/warm.log" | cut -c1-90)")
  below "$cold" 120 || failed=1
  below "$warm" 5 || failed=1
}

# oracle NAME LIMIT_S BATCHES: every config screened (6 replays) at BATCHES, nothing skipped.
oracle() {
  rm -f "$work/oracle_$1.db"
  sweep "oracle_$1" "$2" --db "$work/oracle_$1.db" --batches "$3" --search-margin 1000 \
    --search-keep 100000 --finalists 0 --screen-replays 6
  table+=("oracle $1 (${last_s} s): $(grep '^time:' "$work/oracle_$1.log" | cut -c1-100)")
}

# regret CHECK LIMIT_PCT MIN_BATCHES
regret() {
  python3 "$here/regret.py" "$1" --tuned "$db" --oracle "$work/oracle_$1.db" --max-regret "$2" \
    --min-batches "$3" >"$work/regret_$1.log" 2>&1 || failed=1
  table+=("$(tail -n 2 "$work/regret_$1.log" | grep -E "regret|fewer|error")")
}

run_search() {
  oracle search 110 1,2,4,8,16,32,48,64,80,96,128,256
  regret search 2 12
}

run_bucket() {
  oracle bucket 200 3,5,6,7,9,12,20,28,37,44,50,60,76,100,130,150,201,260,300,401,500
  regret bucket 3 20
}

run_tests() {
  TUNER_REQUIRE_GPU=1 timeout 500 ctest --test-dir "$build" -R "gpu_sweep|gpu_measure" \
    --output-on-failure >"$work/gpu_tests.log" 2>&1 || failed=1
  table+=("gpu tests: $(grep -E 'tests passed|tests failed' "$work/gpu_tests.log" | tail -n 1)")
}

case "$step" in
  main) run_main ;;
  search) run_search ;;
  bucket) run_bucket ;;
  tests) run_tests ;;
  all) run_main; run_search; run_bucket ;;
  *) echo "unknown step '$step': use all, main, search, bucket or tests" >&2; exit 2 ;;
esac
for log in "$work"/regret_*.log; do [ -f "$log" ] && cut -c1-160 "$log"; done
{
  echo "---- issue 12 s3 ($step) on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
  printf '%s\n' "${table[@]}"
  [ "$failed" -eq 0 ] && echo "h200_issue12_s3: OK" || echo "h200_issue12_s3: FAILED"
} | tee "$work/summary.txt"
# Logs only (the DBs and the cubin cache are large): one archive.
(cd "$work" && find . -maxdepth 1 \( -name '*.log' -o -name '*.err' -o -name summary.txt \) -print0 |
  tar -czf "$out/issue12_s3_logs.tgz" --null -T -)
[ "$failed" -eq 0 ]
