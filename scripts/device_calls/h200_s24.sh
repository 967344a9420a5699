#!/usr/bin/env bash
# H200 steps written in the twenty-fourth session, which was lent no device: for the next one.
#   ab        the two combine kernels (5f7f9d9: the host picks the general or the whole-row one)
#             against 419f545's one kernel with both paths as calls (7d74aea's tuner, `one`) and
#             e37f721's general combine alone (`e37`): rounds e37 / one / new twice, the winners'
#             structure at batches 1-256, merges 1 (fp32 partials), 2 (no combine: the control)
#             and 4 (bf16 partials), the fastest launch per merge. Predicted: batch 8 back to
#             e37's time (its combine's SASS is e37's), batches 32-128 at one's or below (the
#             whole-row path without its call).
#             Carry .devcarry/bin/tuner_e37 and tuner_one (scripts/devcarry_old_tuner.sh e37f721
#             e37; ... 7d74aea one).
#   check     correctness where the sweeps and the 16-head runs do not reach: the repeat test and
#             the correctness matrix over PARTS (default fp8 and bf16 at 32 heads: two head groups
#             a batch item at BLOCK_H 16; both combine kernels run in every part).
#   serve     the serving path with the new frozen role (combine.whole_row): a sweep of batches 1, 8
#             (the general combine) and 64 (the whole-row one), `tuner freeze`, then
#             gpu_tunedb_cuda (the launcher against the reference and its DB median),
#             gpu_tunedb_cuda_factors (the launcher and the tuner write the same bits) and
#             gpu_capture (the frozen cubins launched inside graph capture).
#   timeline  where batches 272-512 lose to the linear model (BENCHMARKS.md section 7,
#             twenty-fourth session): the diagnostic tuner's per-CTA marks (.devcarry/bin/
#             tuner_timeline, scripts/devcarry_variant_tuner.sh timeline SMLA_TIMELINE=100) of the
#             sweep's winners at 264, 272, 400 and 512 and of schedule 0 / 1 beside them;
#             scripts/timeline.py prints each SM's last CTA written (a static division's skew).
# Usage: scripts/device_calls/h200_s24.sh ab|check|serve|timeline   (carry .devcarry; logs in $OUT/s24_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s24.sh ab|check|serve|timeline}
source scripts/device_call_env.sh
logs=$out/s24_$step
mkdir -p "$logs"
common="block_h=16,kv_unpack=0,ctas_per_sm=1,mma_path=1,producers=2,num_warps=4"
t64="block_t=64,num_stages=2"
case $step in
  ab)
    source scripts/bench_ab.sh
    export AB_BUILDS="e37 one new"
    bench_ab "$logs" "${BATCHES:-1,8,32,64,128,256}" \
      "$common,$t64,schedule=0,merge=1|2|4,target_ctas=256|512|1024" merge || exit 2
    bench_ab_summary "$logs" merge target_ctas
    ;;
  check)
    source scripts/matrix_check.sh
    matrix_check "$logs" /tmp/s24_cubins "${PARTS:-fp8_ds_mla:2 bf16:2}" "${REPEAT_S:-200}" \
      "${BUDGET_S:-540}"
    ;;
  serve)
    export TUNER_BINARY=$PWD/build/tuner/tuner XDG_CACHE_HOME=/tmp/s24_cache
    work=/tmp/s24_serve
    rm -rf "$work" && mkdir -p "$work"
    run() {  # NAME LIMIT_S COMMAND...: its log, exit status and doctest counts
      local name=$1 limit=$2
      shift 2
      timeout "$limit" "$@" >"$logs/$name.log" 2>&1
      local rc=$?
      echo "$name rc=$rc at $(($(date +%s) - began)) s" \
        "$(grep -hE '^\[doctest\] (test cases|assertions)' "$logs/$name.log" | tr -s ' ' |
          paste -sd ' ')"
      return "$rc"
    }
    if run sweep 200 "$TUNER_BINARY" sweep --db "$work/t.db" --batches 1,8,64 --cache-dir "$work/c" &&
      run freeze 60 "$TUNER_BINARY" freeze --db "$work/t.db" --out "$work/f.db" \
        --cache-dir "$work/c"; then
      run tunedb_cuda 200 env TUNEDB_SERVE_DB="$work/f.db" build/tests/gpu_tunedb_cuda --no-skip
      run factors 200 env TUNEDB_SERVE_DB="$work/f.db" build/tests/gpu_tunedb_cuda_factors --no-skip
    fi
    run capture 180 build/tests/gpu_capture
    grep -hE "wrong results" "$logs/sweep.log" | tail -n 1
    grep -hE "^ +(1|8|64) \{" "$logs/sweep.log" | cut -c1-160
    grep -hE "ERROR|FATAL|CRASH" "$logs"/*.log | head -n 10 | cut -c1-300
    ;;
  timeline)
    export XDG_CACHE_HOME=/tmp/s24_cache
    source scripts/timeline_step.sh
    timeline_step "$logs" b264_s0 264 "$common,$t64,schedule=0,merge=0,target_ctas=128"
    timeline_step "$logs" b272_s1 272 "$common,$t64,schedule=1,merge=4,target_ctas=128"
    timeline_step "$logs" b272_s0 272 "$common,$t64,schedule=0,merge=0,target_ctas=128"
    timeline_step "$logs" b400_s1 400 "$common,$t64,schedule=1,merge=4,target_ctas=128"
    timeline_step "$logs" b512_s0 512 "$common,$t64,schedule=0,merge=2,target_ctas=1024"
    timeline_step "$logs" b512_s1 512 "$common,$t64,schedule=1,merge=4,target_ctas=128"
    for f in "$logs"/*.log; do gzip "$f"; done  # the raw stamps: megabytes
    ;;
  *) echo "unknown step '$step': use ab, check, serve or timeline" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s24_$step.tgz" "s24_$step" && rm -rf "$logs"
