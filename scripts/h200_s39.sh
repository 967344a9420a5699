#!/usr/bin/env bash
# Device call of the thirty-ninth session (2026-12-06), one script for whatever card comes:
#   on an H200: the full reference sweep of this tree and its report (`h200_s36.sh`'s default).
#   on any other card, STEP:
#   cpa (default)  the cp.async gather (SMLA_EXP_CPASYNC_GATHER, pipelined_producer.cuh: a tile's
#                  rows by 16-byte cp.async, a warp's rows' chunks in order, instead of one bulk
#                  copy a row; .devcarry/bin/tuner_cpa from `scripts/devcarry_variant_tuner.sh cpa
#                  SMLA_EXP_CPASYNC_GATHER`) against this tree's kernels: best of schedule 0 and of
#                  schedule 2 on the fp8 winners' structure at BATCHES, two rounds, every config
#                  checked against the reference first; then, where .devcarry/bin/tuner_cpatl is
#                  carried (the same with SMLA_TIMELINE=100), its timeline of schedule 2 at 69
#                  beside this tree's (tuner_timeline), with the fifth tile's copy-issue marks
#                  (kMid*): does a tile's issue still stall ~2 µs after its stage frees.
#   waits / matrix h200_s38.sh's steps (MATRIX=0 waits: no matrix after).
# Usage: scripts/h200_s39.sh [cpa|waits|matrix]   (carry .devcarry; logs in $OUT/s39_STEP.tgz)
set -u
card=$(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | head -n 1)
if [[ $card == *H200* ]]; then
  exec bash scripts/h200_s36.sh
fi
step=${1:-cpa}
if [ "$step" != cpa ]; then
  exec bash scripts/h200_s38.sh "$step"
fi
source scripts/device_call_env.sh
call_logs s39 "$step"
export TUNER_BINARY=$PWD/build/tuner/tuner
source scripts/bench_ab.sh
AB_BUILDS="new cpa" AB_LIMIT_S=${AB_LIMIT_S:-100} BATCHES=${BATCHES:-64,69,72,92,136,256,448} \
  bench_ab_schedules "$logs"
source scripts/timeline_step.sh
for build in timeline cpatl; do
  [ -x ".devcarry/bin/tuner_$build" ] || continue
  TIMELINE_TUNER=tuner_$build XDG_CACHE_HOME=/tmp/s39_$build timeline_step "$logs" \
    "b69_s2_$build" 69 "$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=2" |
    grep -E "==|stream|crossing|  x |fifth"
  grep -A2 "fifth" "$logs/b69_s2_$build.txt" | head -n 3
done
tar -C "$out" -czf "$out/s39_$step.tgz" "s39_$step" && rm -rf "$logs"
