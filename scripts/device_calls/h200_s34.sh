#!/usr/bin/env bash
# Device call of the thirty-fourth session (2026-12-06), one call for what the device time allows
# (most of it went to machines that did not start), the most wanted first:
#   1. on an H200 only: the default fp8 sweep, cold and warm (h200_issue12_s4.sh main: every batch
#      of the default set on this tree's kernels), and `tuner report` of it into
#      $OUT/s34_sweep/reference-sweep (the sm_120-budget and bf16 sweeps of h200_s17.sh sweep are
#      left out for the device time: the bf16 winners run schedule 0, whose SASS did not change,
#      but some sm_120-budget winners run schedule 2, which did);
#   2. the thirty-third session's three builds at the batches under 60 % of copy (h200_s33.sh pair:
#      old = 81ef82e, pair = dc4938e, new = this tree; carry tuner_old / tuner_pair);
#   3. gpu_tunedb_cuda (the launch-contract refusal at open, with the serving tests).
# Usage: scripts/device_calls/h200_s34.sh   (carry .devcarry; logs in $OUT/s34_*.tgz)
source scripts/device_call_env.sh
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
if [[ $card == *H200* ]]; then
  call_logs s34 sweep  # $logs
  default_sweep_report "$logs" s34
  tar -C "$out" -czf "$out/s34_sweep.tgz" s34_sweep && rm -rf "$logs"
fi
BATCHES=${BATCHES:-69,72,92,96,136,416,464} bash scripts/device_calls/h200_s33.sh pair 2>&1 | tail -30
run_gpu_test "$out/gpu_tunedb_cuda.log" 240 gpu_tunedb_cuda
grep -E "ERROR|contract" "$out/gpu_tunedb_cuda.log" | head -n 5
