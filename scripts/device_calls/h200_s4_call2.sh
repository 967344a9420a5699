#!/usr/bin/env bash
# H200, fourth session, second call: the combine/pdl A/B (h200_s4_ab.sh), issue 13's factor
# diagnostic (h200_issue13_s4.sh), and the 16-head fp8 correctness matrix of gpu_sparse_mla_decode
# with the new combine (both launch orders). Short table last.
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
bash scripts/device_calls/h200_s4_ab.sh 2>&1 | tee "$out/ab_summary.txt" | tail -40
bash scripts/device_calls/h200_issue13_s4.sh >"$out/issue13_stdout.txt" 2>&1
echo "issue13 rc=$?"
TUNER_REQUIRE_GPU=1 TUNER_GPU_MATRIX=fp8_ds_mla:4 timeout 200 build/tests/gpu_sparse_mla_decode \
  -tc="every config*" >"$out/gpu_smla_fp8_4.log" 2>&1
echo "gpu_sparse_mla_decode fp8:4 rc=$? $(grep -E 'checks run' "$out/gpu_smla_fp8_4.log")"
grep -E "^fp8|test cases" "$out/gpu_smla_fp8_4.log" | tail -14
tail -30 "$out/issue13_stdout.txt"
