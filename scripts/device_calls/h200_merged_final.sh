#!/usr/bin/env bash
# H200, last call of the merge session: issue 11's --l2 sets vs --l2 flush at batch 1 and 8; issue
# 13's timing case (a launched winner vs its DB median, on a swept and frozen DB); the fp8 16-head
# part of the sparse MLA correctness matrix on the merged tree. One tarball comes back.
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh
out=${OUT:-/tmp/tuner-out}
logs=$(mktemp -d)
OUT=$logs timeout 150 bash scripts/device_calls/h200_issue11.sh bench >"$logs/i11_bench.txt" 2>&1
echo "h200_issue11 bench rc=$?"; tail -9 "$logs/i11_bench.txt"
OUT=$logs bash scripts/device_calls/h200_launcher_timing.sh  # issue 13: sweep, freeze, launcher vs DB median
TUNER_GPU_MATRIX=fp8_ds_mla:4 TUNER_GPU_LOG=$logs/checks.log timeout 150 \
  .devcarry/bin/gpu_sparse_mla_decode >"$logs/gpu_smla.log" 2>&1
echo "gpu_sparse_mla_decode fp8 TP4 rc=$?"; grep -E "checks run|test cases|assertions|FAIL" "$logs/gpu_smla.log" | head
gzip -f "$logs/checks.log" 2>/dev/null
tar czf "$out/final_logs.tgz" -C "$logs" .
