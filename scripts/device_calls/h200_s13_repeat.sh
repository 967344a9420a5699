#!/usr/bin/env bash
# H200, thirteenth session, call C: every launch variant of the fp8 32- and 16-head spaces at batch
# 64, topk 2048, launched 1 + TUNER_GPU_REPEATS times on the same inputs (gpu_sparse_mla_repeat):
# a variant whose bits move is racing. Then the bf16 32-head part if time is left.
# Usage: LIMIT_S=... scripts/device_calls/h200_s13_repeat.sh   (carry .devcarry; logs in $OUT)
source scripts/device_call_env.sh
for part in fp8_ds_mla:2 fp8_ds_mla:4 bf16:2; do
  name=${part//:/_}
  left=$((${LIMIT_S:-420} - $(date +%s) + began))
  [ "$left" -gt 40 ] || { echo "$part: not run, $left s left"; continue; }
  TUNER_GPU_MATRIX=$part TUNER_GPU_REPEATS=${REPEATS:-8} TUNER_GPU_LOG=$out/moved_$name.log \
    timeout "$left" build/tests/gpu_sparse_mla_repeat >"$out/repeat_$name.log" 2>&1
  echo "$part rc=$? at $(($(date +%s) - began)) s"
  grep -E "^(fp8_ds_mla|bf16) |test cases" "$out/repeat_$name.log"
  head -n 12 "$out/moved_$name.log" | cut -c1-300
done
