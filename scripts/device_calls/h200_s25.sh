#!/usr/bin/env bash
# H200 steps written in the twenty-fifth session, which was lent no device: for the next one.
#   whole     schedule 2 (whole rows, 5312ac1): first gpu_sparse_mla_whole_rows (its correctness
#             where it differs from the balanced schedule: tails of 1 to N - 1 rows before 1-2
#             whole rows a CTA, fp8 / e4m3 / bf16, 16 and 32 heads, merges 0 / 1 / 4; fp8 also
#             under the 2-CTA launch bound, where schedules 1 and 2 take the token softmax), then
#             the three schedules side by side (tuner bench --best-per schedule,ctas_per_sm; two
#             rounds; schedule 0 keeps the 1-CTA bound, the sweep's trim) at
#             batches 256-512 on the fp8 winners' structure (BLOCK_T 64, 2 stages) and the bf16
#             one's (BLOCK_T 32, 3 stages). Predicted from the reference sweep (BENCHMARKS.md
#             section 7, twenty-fifth session): schedule 2 at 272-400 about the schedule-1 kernel's
#             time at 264 plus its tail, 7-10 % under schedule 1's; equal to schedule 1 at 256 and
#             below (the same division); no combine at 264 and 528.
#   timeline  the diagnostic tuner's per-CTA marks (.devcarry/bin/tuner_timeline,
#             scripts/devcarry_variant_tuner.sh timeline SMLA_TIMELINE=100) of schedules 1 and 2
#             at 272 and 400: what the tail and the whole row cost each CTA, and the combine.
# Usage: scripts/device_calls/h200_s25.sh whole|timeline   (carry .devcarry; logs in $OUT/s25_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s25.sh whole|timeline}
source scripts/device_call_env.sh
logs=$out/s25_$step
mkdir -p "$logs"
common="block_h=16,kv_unpack=0,ctas_per_sm=1,mma_path=1,producers=2,num_warps=4"
t64="block_t=64,num_stages=2"
batches=${BATCHES:-256,264,272,304,336,400,432,464,512}
case $step in
  whole)
    timeout 300 build/tests/gpu_sparse_mla_whole_rows >"$logs/correct.log" 2>&1
    echo "gpu_sparse_mla_whole_rows rc=$? at $(($(date +%s) - began)) s" \
      "$(grep -hE '^\[doctest\] (test cases|assertions)' "$logs/correct.log" | tr -s ' ' |
        paste -sd ' ')"
    grep -hE "FAIL|ERROR|whole-rows launches" "$logs/correct.log" | head -n 8 | cut -c1-300
    source scripts/bench_ab.sh
    export AB_BUILDS=new
    mkdir -p "$logs/fp8" "$logs/bf16"
    bench_ab "$logs/fp8" "$batches" \
      "${common/ctas_per_sm=1/ctas_per_sm=1|2},$t64,schedule=0|1|2,merge=1|4,target_ctas=128|1024" \
      schedule,ctas_per_sm
    bench_ab_summary "$logs/fp8" schedule ctas_per_sm merge target_ctas
    XDG_CACHE_HOME=/tmp/bench_ab_cache_new timeout 200 build/tuner/tuner bench --kv bf16 \
      --batches "$batches" --no-default --best-per schedule \
      --where "$common,block_t=32,num_stages=3,schedule=0|1|2,merge=1|4,target_ctas=128|1024" \
      >"$logs/bf16/new_1.log" 2>&1
    echo "bf16 rc=$? at $(($(date +%s) - began)) s"
    grep -E "^ +[0-9]+ block_t.*best of" "$logs/bf16/new_1.log" | cut -c1-200
    ;;
  timeline)
    export XDG_CACHE_HOME=/tmp/s25_cache
    source scripts/timeline_step.sh
    timeline_step "$logs" b272_s1 272 "$common,$t64,schedule=1,merge=4,target_ctas=128"
    timeline_step "$logs" b272_s2 272 "$common,$t64,schedule=2,merge=4,target_ctas=128"
    timeline_step "$logs" b400_s1 400 "$common,$t64,schedule=1,merge=4,target_ctas=128"
    timeline_step "$logs" b400_s2 400 "$common,$t64,schedule=2,merge=4,target_ctas=128"
    for f in "$logs"/*.log; do gzip "$f"; done  # the raw stamps: megabytes
    ;;
  *) echo "unknown step '$step': use whole or timeline" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s25_$step.tgz" "s25_$step" && rm -rf "$logs"
