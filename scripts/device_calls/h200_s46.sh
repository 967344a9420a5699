#!/usr/bin/env bash
# Device call of the forty-sixth session (2026-12-07), one script for whatever card comes:
#   on an H200: the reference sweep of this tree (`h200_s17.sh sweep`, as `h200_s36.sh`: the
#     default fp8 sweep cold and warm, the --budget-arch sm_120 sweep, the bf16 sweep, `tuner
#     report`; logs in $OUT/s17_sweep.tgz, the DB as reference-sweep.sqlite.gz).
#   on any other card (`lazy`): the experiment SMLA_EXP_LAZY_RESCALE (pipelined_pv.cuh's
#     online_max_step: the softmax's base stays until a tile's maximum rises more than 2^8 above
#     it, so most tiles skip the accumulator's rescale; .devcarry/bin/tuner_lazy from
#     `scripts/devcarry_variant_tuner.sh lazy SMLA_EXP_LAZY_RESCALE`) against this tree's tuner:
#     the fp8 winners' structure, best of schedule 0 and of schedule 2 (bench_ab_schedules), two
#     rounds at BATCHES (default 64, 69, 128, 512); `tuner bench` checks every
#     config against the reference before timing it.
# Usage: scripts/device_calls/h200_s46.sh [lazy]   (carry .devcarry; logs in $OUT/s46_lazy.tgz)
set -u
card=$(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | head -n 1)
echo "card: $card"
if [[ $card == *H200* ]]; then
  BUDGET_S=${BUDGET_S:-570} bash scripts/device_calls/h200_s17.sh sweep
  exit
fi
step=${1:-lazy}
[ "$step" = lazy ] || { echo "unknown step '$step': use lazy" >&2; exit 2; }
source scripts/device_call_env.sh
call_logs s46 "$step" >/dev/null
source scripts/bench_ab.sh
BATCHES=${BATCHES:-64,69,128,512} AB_BUILDS="new lazy" AB_LIMIT_S=${AB_LIMIT_S:-75} \
  bench_ab_schedules "$logs"
tar -C "$out" -czf "$out/s46_$step.tgz" "s46_$step" && rm -rf "$logs"
