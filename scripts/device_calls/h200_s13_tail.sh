#!/usr/bin/env bash
# H200, thirteenth session: the tail of h200_s10.sh's call (NCU_SCRIPT=scripts/device_calls/h200_s13_tail.sh):
# gpu_sweep's waves case again (the twelfth session's run failed on the message's old wording),
# then the rest of the fp8 32-head correctness matrix (batch 64 and 128; batch 1 and 7 ran in the
# twelfth session) with the time the timeout leaves it.
set -u
out=${OUT:-/tmp/tuner-out}
began=$(date +%s)
timeout 120 build/tests/gpu_sweep -tc="--batches waves*" >"$out/gpu_sweep_waves.log" 2>&1
echo "gpu_sweep waves rc=$? $(grep -E 'test cases' "$out/gpu_sweep_waves.log" | tail -n 1)"
TUNER_GPU_MATRIX=fp8_ds_mla:2 TUNER_GPU_MATRIX_BATCHES=64,128 \
  build/tests/gpu_sparse_mla_decode -tc="every config*" >"$out/matrix_fp8_32_b64_128.log" 2>&1
echo "matrix fp8:2 b64,128 rc=$? at $(($(date +%s) - began)) s"
grep -E "^fp8_ds_mla |FAIL|test cases" "$out/matrix_fp8_32_b64_128.log" | head -n 12
