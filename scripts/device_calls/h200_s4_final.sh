#!/usr/bin/env bash
# H200, fourth session, last call: issue 12's cold + warm 51-size sweep (the plan no longer
# rewritten when held), the GPU tests of what changed (the sweep with --also-time, the serving
# launcher with pdl in the frozen DB, the fp8_gemm launcher through the new launch signature),
# the corner cases and the 2^31-byte cache with the new combine, and the 16-head fp8 matrix.
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
logs=$out/final; mkdir -p "$logs"
bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/issue12_main.txt" 2>&1
export TUNER_REQUIRE_GPU=1
for t in gpu_tunedb_cuda gpu_tunedb_cuda_fp8_gemm gpu_tunedb_cuda_factors; do
  timeout 120 build/tests/$t >"$logs/$t.log" 2>&1
  echo "$t rc=$? $(grep -E 'test cases' "$logs/$t.log")"
done
timeout 150 build/tests/gpu_sparse_mla_decode -tc="corner cases*,a KV cache over*,the GPU reference*" \
  >"$logs/gpu_smla_corners.log" 2>&1
echo "gpu_sparse_mla_decode corners/2^31 rc=$? $(grep -E 'test cases' "$logs/gpu_smla_corners.log")"
TUNER_GPU_MATRIX=fp8_ds_mla:4 timeout 250 build/tests/gpu_sparse_mla_decode -tc="every config*" \
  >"$logs/gpu_smla_fp8_4.log" 2>&1
echo "gpu_sparse_mla_decode fp8:4 rc=$? $(grep -E 'checks run|test cases' "$logs/gpu_smla_fp8_4.log" | tr '\n' ' ')"
tail -12 "$logs/issue12_main.txt"
tar -C "$out" -czf "$out/s4_final.tgz" final && rm -rf "$logs"
