#!/usr/bin/env bash
# H200 steps written in the twenty-seventh session (2026-12-05); run once on an H100 (BENCHMARKS.md).
#   ab    1. gpu_sparse_mla_whole_rows: the GPU correctness of this tree's
#            split kernels (the staged ids read before the stage's wait, the q handoff's load at
#            the top of a row's first tile: never run on a GPU).
#         2. The twenty-sixth session's A/B, finished: AB_BUILDS (default "old v3 new"; old =
#            e5cf0ee, ids in registers; v3 = ce675e3, ids staged, read after the wait; new = this
#            tree), two rounds, fp8 winners' structure (BLOCK_T 64, 4 + 2 warps, 2 stages), best
#            launch per schedule and launch bound at BATCHES, TARGET_CTAS 128 only (this tree
#            sweeps schedule 2 at 128 alone: the same configs in every build). Predicted: schedule
#            0 as old (its SASS is old's but for offsets), schedule 2 at least v3's.
#         3. TARGET_CTAS 0 (one wave of the resident CTAs, new in this tree) against the counts
#            the space had, on this tree only, two rounds, schedule 0, merges 1 and 4, best launch
#            per TARGET_CTAS at ONE_WAVE_BATCHES. Predicted: at 66, 4 splits (264 CTAs of 8 tiles)
#            near batch 64's time (~33 us against the reference sweep's 34.9: 58.1 -> ~61.5 % of
#            copy); at 88, 3 splits of 11 tiles, ~41-42 us against schedule 2's 44.2; elsewhere
#            the same launch as 256 or 128; at 24, 11 splits of 3 tiles against 256's 8 of 4.
# Usage: scripts/device_calls/h200_s27.sh ab   (carry .devcarry with tuner_old and tuner_v3; $OUT/s27_ab.tgz)
step=${1:?usage: scripts/device_calls/h200_s27.sh ab}
source scripts/device_call_env.sh
logs=$out/s27_$step
mkdir -p "$logs"
base="block_h=16,block_t=64,num_stages=2,kv_unpack=0,mma_path=1,num_warps=4,producers=2"
case $step in
  ab)
    run_gpu_test "$logs/whole_rows.log" 200 gpu_sparse_mla_whole_rows
    source scripts/bench_ab.sh
    export AB_BUILDS=${AB_BUILDS:-old v3 new}
    mkdir -p "$logs/fp8" "$logs/one_wave"
    bench_ab "$logs/fp8" "${BATCHES:-64,66,72,128,264,272,336,400,432}" \
      "$base,ctas_per_sm=1|2,schedule=0|2,merge=1|4,target_ctas=128" schedule,ctas_per_sm
    bench_ab_summary "$logs/fp8" schedule ctas_per_sm merge
    AB_BUILDS=new bench_ab "$logs/one_wave" "${ONE_WAVE_BATCHES:-24,64,66,72,88,96,132}" \
      "$base,ctas_per_sm=1,schedule=0,merge=1|4,target_ctas=0|128|256|512|1024" target_ctas
    AB_BUILDS=new bench_ab_summary "$logs/one_wave" target_ctas merge
    grep -hE "WRONG|wrong_result|error|FAIL" "$logs"/*.log "$logs"/*/*.log | head -n 10 |
      cut -c1-300
    ;;
  *) echo "unknown step '$step': use ab" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s27_$step.tgz" "s27_$step" && rm -rf "$logs"
