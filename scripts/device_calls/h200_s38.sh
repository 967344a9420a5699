#!/usr/bin/env bash
# Device call of the thirty-eighth session (2026-12-06), one script for whatever card comes:
#   on an H200: the full reference sweep of this tree and its report (`h200_s36.sh`'s default,
#     which runs `h200_s17.sh sweep`); only an H200's figures go into the reference report.
#   on any other card, STEP:
#   split (default)  what the q loads ahead (4cc2ee1) bought, apart from the division they moved
#                    schedule 2's bound-of-one kernels to: under a launch bound of one CTA an SM
#                    those kernels take 179 registers since (164 before), so they run one CTA an SM
#                    and a 132-CTA division where they ran two and 264 CTAs; under a bound of two
#                    they keep 167 registers and 264 CTAs in both builds. Best of schedule 2 at
#                    each ctas_per_sm, this tree (`new`) against 4cc2ee1's parent (`old`,
#                    .devcarry/bin/tuner_old from `scripts/devcarry_old_tuner.sh 6ea1a23`), two
#                    rounds, schedule 0 timed beside them as the control (no handoff); then, where
#                    .devcarry/bin/tuner_timeline is carried, per-CTA timelines of schedule 2 at 69
#                    (the batch it still loses to schedule 0 on an H100) under both bounds.
#   matrix           the correctness matrix's parts PARTS (default fp8_ds_mla:4) on this tree's
#                    schedule-1 / 2 kernels (changed by 4cc2ee1), in the time left (BUDGET_S).
#   waits            where a two-CTA-an-SM crossing waits before the new row's next copies (call
#                    6: 2.7 µs median after the q store at 69): timelines of schedule 2 under the
#                    bound of two at 69 and 92 with the marks of that tile's staged ids and of
#                    its stage wait (timeline.cuh kCrossIdsTaken / kCrossStageFree; rebuild
#                    .devcarry/bin/tuner_timeline), then `matrix` in the time left (MATRIX=0:
#                    none); from 017f70c on also the producers' fifth tile's same
#                    steps (kMid*), to tell a crossing's waits from every tile's.
# Usage: scripts/device_calls/h200_s38.sh [split|matrix|waits]   (carry .devcarry; logs in $OUT/s38_STEP.tgz)
set -u
card=$(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | head -n 1)
if [[ $card == *H200* ]]; then
  exec bash scripts/device_calls/h200_s36.sh
fi
step=${1:-split}
source scripts/device_call_env.sh
call_logs s38 "$step"
export TUNER_BINARY=$PWD/build/tuner/tuner

split() {
  source scripts/bench_ab.sh
  AB_LIMIT_S=${AB_LIMIT_S:-100} bench_ab "$logs" "${BATCHES:-69,72,92,136,192}" \
    "$winners,merge=4,schedule=2,target_ctas=0|128|256,ctas_per_sm=1|2" ctas_per_sm
  bench_ab_summary "$logs" ctas_per_sm
  mkdir -p "$logs/s0"
  AB_LIMIT_S=60 bench_ab "$logs/s0" "${BATCHES:-69,72,92,136,192}" \
    "$winners,merge=4,schedule=0,target_ctas=0|128|256,ctas_per_sm=1|2" schedule
  bench_ab_summary "$logs/s0" schedule
  echo "lines naming a wrong result: $(grep -rciE "wrong" "$logs" --include='*.log' | paste -sd ' ')"
  [ -x .devcarry/bin/tuner_timeline ] || return 0
  source scripts/timeline_step.sh
  local cps
  for cps in 1 2; do
    XDG_CACHE_HOME=/tmp/s38_timeline timeline_step "$logs" "b69_s2_cps$cps" 69 \
      "$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=$cps" | grep -E "==|stream|crossing|  x "
  done
}
matrix() {
  matrix_parts "${PARTS:-fp8_ds_mla:4}" $((${BUDGET_S:-540} - $(date +%s) + began))
}
waits() {
  source scripts/timeline_step.sh
  local batch
  for batch in 69 92; do
    XDG_CACHE_HOME=/tmp/s38_timeline timeline_step "$logs" "b${batch}_s2_cps2" "$batch" \
      "$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=2" |
      grep -E "==|stream|crossing|  x |fifth"
    grep -A2 "fifth" "$logs/b${batch}_s2_cps2.txt" | head -n 3
  done
  [ "${MATRIX:-1}" = 0 ] || matrix
}
case "$step" in
  split) split ;;
  matrix) matrix ;;
  waits) waits ;;
  *)
    echo "unknown step '$step': use split, matrix or waits" >&2
    exit 2
    ;;
esac
tar -C "$out" -czf "$out/s38_$step.tgz" "s38_$step" && rm -rf "$logs"
