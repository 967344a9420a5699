#!/usr/bin/env bash
# Issue 12 on the H200: every CUDA-graph batch size tuned through the batch search, and its regret
# measured. Steps (each fits one 10-minute call; `all` runs them in order, ~8 min):
#   test    TUNER_REQUIRE_GPU=1 gpu_sweep (fault isolation, kill -9 + resume through the search)
#           and the CPU tests of this issue (batch search, batch sets, shape handles, Python)
#   main    the default sweep (all 51 cudagraph sizes up to 512) with a fresh cubin cache (cold),
#           then the same command again (warm: nothing changed, target < 5 s); wall split
#   audit   an oracle: every config timed at 12 batches incl. today's 11 defaults (--search-margin
#           1000 --search-keep 100000: nothing is skipped; verified at 3 anchors), then
#           scripts/regret.py search: the searched winner vs the oracle's best (target <= 2 %)
#   bucket  the same oracle at 21 batches the sweep did not tune, then scripts/regret.py bucket:
#           the config tunedb's lookup (Python shape handle) returns there vs the best (<= 3 %)
# Usage: scripts/device_calls/h200_issue12.sh BUILD_DIR [all|test|main|audit|bucket]
# Logs and DBs under $OUT (default /tmp/tuner-out); a short table is printed last; exit 1 when a
# step failed or a regret target was missed.
set -u
build=${1:?usage: $0 BUILD_DIR [all|test|main|audit|bucket]}
step=${2:-all}
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out"
[ -f scripts/device_env.sh ] && . scripts/device_env.sh  # the GPU machine's NVRTC, carried libs
here=$(cd "$(dirname "$0")/.." && pwd)  # scripts/, where the shared helpers are
tuner="$build/tuner/tuner"
db="$out/issue12_tuning.db"
cache="$out/issue12_cache"
export TUNEDB_LIBRARY=${TUNEDB_LIBRARY:-$(ls "$build"/db/libtunedb.so* .devcarry/lib/libtunedb.so* 2>/dev/null | head -n 1)}
failed=0
table=()

seconds() { date +%s.%N; }
took() { python3 -c "print(f'{$2 - $1:.1f}')"; }

run_test() {
  TUNER_REQUIRE_GPU=1 ctest --test-dir "$build" -R "gpu_sweep|test_batch_|test_shape_handle|test_tunedb_python|c_example" \
    --output-on-failure >"$out/issue12_tests.log" 2>&1 || failed=1
  table+=("tests: $(grep -E 'tests passed|tests failed' "$out/issue12_tests.log" | tail -n 1)")
}

run_main() {
  rm -rf "$cache" "$db"
  local t0 t1 t2
  t0=$(seconds)
  "$tuner" sweep --db "$db" --cache-dir "$cache" >"$out/issue12_cold.log" 2>"$out/issue12_cold.err" || failed=1
  t1=$(seconds)
  "$tuner" sweep --db "$db" --cache-dir "$cache" >"$out/issue12_warm.log" 2>"$out/issue12_warm.err" || failed=1
  t2=$(seconds)
  local cold warm
  cold=$(took "$t0" "$t1")
  warm=$(took "$t1" "$t2")
  table+=("cold sweep (51 batches, fresh cache): ${cold} s (target < 120): $(grep '^time:' "$out/issue12_cold.log")")
  table+=("  $(grep '^batch search:' "$out/issue12_cold.log")")
  table+=("warm rerun: ${warm} s (target < 5)")
  python3 -c "import sys; sys.exit(0 if $cold < 120 and $warm < 5 else 1)" || failed=1
}

# oracle NAME BATCHES: every config timed at BATCHES into $out/issue12_oracle_NAME.db
oracle() {
  "$tuner" sweep --db "$out/issue12_oracle_$1.db" --cache-dir "$cache" --batches "$2" \
    --search-margin 1000 --search-keep 100000 --finalists 0 \
    >"$out/issue12_oracle_$1.log" 2>"$out/issue12_oracle_$1.err" || failed=1
  table+=("oracle $1 ($2): $(grep '^time:' "$out/issue12_oracle_$1.log" | cut -c1-60)")
}

run_audit() {
  oracle audit 1,2,4,8,16,32,48,64,80,96,128,256
  python3 "$here/regret.py" search --tuned "$db" --oracle "$out/issue12_oracle_audit.db" \
    --max-regret 2 >"$out/issue12_search_regret.log" 2>&1 || failed=1
  table+=("$(tail -n 1 "$out/issue12_search_regret.log")")
}

run_bucket() {
  oracle bucket 3,6,12,20,28,37,50,60,100,130,150,201,230,260,300,333,360,401,450,500,511
  python3 "$here/regret.py" bucket --tuned "$db" --oracle "$out/issue12_oracle_bucket.db" \
    --max-regret 3 >"$out/issue12_bucket_regret.log" 2>&1 || failed=1
  table+=("$(tail -n 1 "$out/issue12_bucket_regret.log")")
}

case "$step" in
  test) run_test ;;
  main) run_main ;;
  audit) run_audit ;;
  bucket) run_bucket ;;
  all) run_test; run_main; run_audit; run_bucket ;;
  *) echo "unknown step '$step': use all, test, main, audit or bucket" >&2; exit 2 ;;
esac
for log in "$out"/issue12_*regret.log; do [ -f "$log" ] && cat "$log"; done
echo "---- issue 12 ($step) on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
printf '%s\n' "${table[@]}"
[ "$failed" -eq 0 ] && echo "h200_issue12: OK" || { echo "h200_issue12: FAILED"; exit 1; }
