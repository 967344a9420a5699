#!/usr/bin/env bash
# H200, third session, call B (the merged tree): every GPU test binary with TUNER_REQUIRE_GPU=1
# (a skip fails); bf16 KV per variant at batch 1-128 (issue 9's bf16 row); issue 13's torch /
# example part (scripts/device_calls/h200_issue13_s3.sh torch, on the carried build); the fp8 16-head part of
# the correctness matrix. Each step has its own limit; a short table comes last.
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
logs=$out/b; mkdir -p "$logs"
export TUNER_REQUIRE_GPU=1 TUNER_BINARY=$PWD/build/tuner/tuner
table=()
for t in gpu_cuda_driver gpu_measure gpu_capture gpu_fp8_gemm gpu_tunedb_cuda gpu_tunedb_cuda_fp8_gemm gpu_sweep; do
  timeout 150 build/tests/$t >"$logs/$t.log" 2>&1
  table+=("$(printf '%-26s rc=%-3s %s' $t $? "$(grep -hE '^\[doctest\] (test cases|assertions)' "$logs/$t.log" | tr -s ' ' | paste -sd ' ')")")
done
timeout 60 build/tuner/tuner bench --kv bf16 --batches 1,8,32,64,128 --where "mma_path=0|1,kv_unpack=0,ctas_per_sm=1,block_t=32|64,num_warps=4|8,num_stages=2|4,producers=0|2" \
  --best-per mma_path >"$logs/bf16.log" 2>&1
table+=("bf16 bench rc=$?")
BUILD=$PWD/build timeout 150 bash scripts/device_calls/h200_issue13_s3.sh torch >"$logs/i13_torch.txt" 2>&1
table+=("h200_issue13_s3 torch rc=$?")
cp "$out"/h200_issue13_s3_* "$logs/" 2>/dev/null; rm -f "$out"/h200_issue13_s3_*
TUNER_GPU_MATRIX=fp8_ds_mla:4 timeout 150 build/tests/gpu_sparse_mla_decode >"$logs/gpu_smla.log" 2>&1
table+=("gpu_sparse_mla_decode fp8:4 rc=$? $(grep -h 'checks run' "$logs/gpu_smla.log")")
grep -E "\(fastest\)|\(best of" "$logs/bf16.log" | awk '{print $1, $2, $3, $4, $5, $10, $11, $(NF-3), $(NF-1), $NF}'
cat "$logs/i13_torch.txt" | tail -12
printf '%s\n' "${table[@]}"
tar -C "$out" -czf "$out/s3_final_b.tgz" b && rm -rf "$logs"
