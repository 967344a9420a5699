#!/usr/bin/env bash
# H200, fourth session (reverted change, kept as the record of its runs): producer warps start
# gathering before the consumers prepare q
# (A/B against the tree before, .devcarry/ab/tuner_head), then correctness of the new prologue:
# the 16-head fp8 and bf16 matrices (every compile key, both launch orders) and the corner cases.
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
NCU_BATCHES="" VARIANTS="head new" bash scripts/device_calls/h200_s4_ab.sh 2>&1 | head -40
export TUNER_REQUIRE_GPU=1
timeout 60 build/tests/gpu_sparse_mla_decode -tc="corner cases*" >"$out/corners.log" 2>&1
echo "corners rc=$? $(grep -E 'test cases' "$out/corners.log")"
for part in fp8_ds_mla:4 bf16:4; do
  TUNER_GPU_MATRIX=$part timeout ${LIMIT:-170} build/tests/gpu_sparse_mla_decode -tc="every config*" \
    >"$out/matrix_${part%%:*}.log" 2>&1
  echo "matrix $part rc=$? $(grep -E 'checks run' "$out/matrix_${part%%:*}.log")"
  grep -E "^(fp8|bf16)" "$out/matrix_${part%%:*}.log" | awk '{c+=$5; f+=$6} END {print "  rows", NR, "checks", c, "failed", f}'
done
