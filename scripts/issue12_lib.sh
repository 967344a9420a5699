# Sourced by scripts/device_calls/h200_issue12_s3.sh and _s4.sh (issue 12 on the H200): the device set-up, a
# timed `tuner sweep` and the cold/warm default sweep. Expects build, work, out, here set by the
# caller; sets tuner, db, cache, TUNEDB_LIBRARY, failed and table.
mkdir -p "$work" "$out"
if [ -d .devcarry ]; then
  source scripts/device_env.sh >/dev/null
  source scripts/device_build_link.sh >/dev/null
fi
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

# The default sweep (51 cudagraph sizes and the wave edges 132, 264, 396) with a fresh cubin cache, then again with nothing changed.
run_main() {
  rm -rf "$cache" "$db"
  sweep cold 200 --db "$db"
  local cold=$last_s
  sweep warm 60 --db "$db"
  local warm=$last_s
  table+=("cold sweep, the default batch set, fresh cache: ${cold} s (target < 120)")
  table+=("  $(grep '^time:' "$work/cold.log")")
  table+=("  $(grep '^protocol:' "$work/cold.log")")
  table+=("  $(grep '^run ' "$work/cold.log" | cut -c1-110)")
  table+=("  $(grep '^batch search:' "$work/cold.log")")
  table+=("warm rerun: ${warm} s (target < 5); $(grep '^time:' "$work/warm.log" | cut -c1-90)")
  below "$cold" 120 || failed=1
  below "$warm" 5 || failed=1
}

run_tests() {
  TUNER_REQUIRE_GPU=1 timeout 500 ctest --test-dir "$build" -R "gpu_sweep|gpu_measure" \
    --output-on-failure >"$work/gpu_tests.log" 2>&1 || failed=1
  table+=("gpu tests: $(grep -E 'tests passed|tests failed' "$work/gpu_tests.log" | tail -n 1)")
}

# run_step STEP: the caller's run_search / run_bucket, or the ones above.
run_step() {
  case "$1" in
    main) run_main ;;
    search) run_search ;;
    bucket) run_bucket ;;
    tests) run_tests ;;
    all) run_main; run_search; run_bucket ;;
    *) echo "unknown step '$1': use all, main, search, bucket or tests" >&2; exit 2 ;;
  esac
}

# finish NAME [HEADER_TAIL]: the short table last (also $work/summary.txt), the logs of this call
# in one archive $out/issue12_NAME_logs.tgz (the DBs and the cubin cache are large: not kept);
# returns 0 only when nothing failed.
finish() {
  {
    echo "---- issue 12 $1 ($step) on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)${2:-}"
    printf '%s\n' "${table[@]}"
    [ "$failed" -eq 0 ] && echo "h200_issue12_$1: OK" || echo "h200_issue12_$1: FAILED"
  } | tee "$work/summary.txt"
  (cd "$work" && find . -maxdepth 1 \( -name '*.log' -o -name '*.err' -o -name '*.json' \
    -o -name summary.txt \) -print0 | tar -czf "$out/issue12_$1_logs.tgz" --null -T -)
  [ "$failed" -eq 0 ]
}
