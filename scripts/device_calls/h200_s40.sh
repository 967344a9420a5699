#!/usr/bin/env bash
# Device call of the fortieth session (2026-12-06), one script for whatever card comes:
#   on an H200: the full reference sweep of this tree and its report (`h200_s36.sh`'s default;
#     SWEEP=0: the STEP below instead).
#   on any other card, STEP:
#   t32 (default)  two producer warps at 16- and 32-token tiles now split a tile's rows warp by
#                  warp (producer_rows.h, b88b41c; before, the second warp copied none and the
#                  first issued every bulk copy, one lane a round): .devcarry/bin/tuner_old (from
#                  `scripts/devcarry_old_tuner.sh a59f4e6 old`) against this tree on the sm_120
#                  budget's winners' structure (every winner of the reference sweep's
#                  --budget-arch sm_120 run from batch 2 up: 4 + 2 warps, BLOCK_T 32 or 16, merge
#                  4), best per BLOCK_T at BATCHES, two rounds; `tuner bench` checks every config
#                  against the reference first. Before it, gpu_sparse_mla_decode's corner cases
#                  (all -1, duplicates, last slots; a BLOCK_T 16 and a BLOCK_T 32 kernel of two
#                  producer warps among them). Then, in the time left, the correctness matrix's
#                  fp8 16-head part on this tree's kernels (the changed ones among them).
#                  TILES (default 16|32) picks the tile sizes, AB_BUILDS the builds (bench_ab.sh),
#                  PRODUCERS (default 2) the producer warps, best per BLOCK_T and producers: four
#                  producer warps at 32-token tiles, which the sweep trims (forty-first session),
#                  `SWEEP=0 AB_BUILDS=new AB_EXTRA=--trimmed PRODUCERS="2|4" TILES=32 ... t32`.
#                  BEST_PER (default block_t,producers): the parameters to give the best of.
#   p4, waits, matrix: `h200_s39.sh`'s steps (four producer warps; timelines; the matrix's parts).
# Usage: scripts/device_calls/h200_s40.sh [t32|p4|waits|matrix]   (carry .devcarry; logs in $OUT/s40_STEP.tgz)
set -u
card=$(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | head -n 1)
if [[ $card == *H200* ]] && [ "${SWEEP:-1}" = 1 ]; then  # SWEEP=0: the STEP on an H200 too
  exec bash scripts/device_calls/h200_s36.sh
fi
step=${1:-t32}
if [ "$step" != t32 ]; then
  SWEEP=0 exec bash scripts/device_calls/h200_s39.sh "$step"
fi
source scripts/device_call_env.sh
call_logs s40 "$step"
export TUNER_BINARY=$PWD/build/tuner/tuner
run_gpu_test "$logs/corner.log" 90 gpu_sparse_mla_decode -tc='corner*'
grep -E "ERROR|FAILED" "$logs/corner.log" | head -n 5 | cut -c1-200
source scripts/bench_ab.sh
small_tiles="block_h=16,kv_unpack=0,mma_path=1,producers=${PRODUCERS:-2},num_warps=4"
small_tiles="$small_tiles,block_t=${TILES:-16|32},merge=4"
# The default kept small for a call of a few minutes (device time ran short in this session):
# schedule 0, the stages and TARGET_CTAS of the sm_120 budget's winners (WHERE for more).
AB_LIMIT_S=${AB_LIMIT_S:-120} bench_ab "$logs" "${BATCHES:-8,32,64,128}" \
  "$small_tiles,${WHERE:-num_stages=3|4,schedule=0,target_ctas=0|256,ctas_per_sm=1}" \
  "${BEST_PER:-block_t,producers}"
bench_ab_summary "$logs" block_t producers num_stages schedule
echo "lines naming a wrong result: $(grep -ciE "wrong" "$logs"/*.log | paste -sd ' ')"
left=$((${BUDGET_S:-560} - $(date +%s) + began))
[ "$left" -gt 60 ] && matrix_parts fp8_ds_mla:4 "$left" -tc='every config*'
tar -C "$out" -czf "$out/s40_$step.tgz" "s40_$step" && rm -rf "$logs"
