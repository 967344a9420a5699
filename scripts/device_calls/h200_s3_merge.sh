#!/usr/bin/env bash
# H200, third session: merge 0 (combine kernel) vs merge 1 (the last split CTA merges) on the
# pipelined winners, one run; then the correctness matrix of every compile key (fp8 and bf16, 16
# local heads; merge 1 at every stage) and the serving launcher's test (merge 1 in the frozen DB).
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out/m"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
where="mma_path=1,kv_unpack=0,ctas_per_sm=1,block_t=32|64,num_warps=4|8,num_stages=2|4,producers=2,merge=0|1"
timeout 200 $bin/tuner bench --batches 1,8,32,64,128 --where "$where" --best-per merge,block_t,num_warps \
  >"$out/m/merge_fp8.log" 2>&1
echo "== merge fp8 rc=$? $(grep -c WRONG "$out/m/merge_fp8.log") wrong"
grep -E "\(fastest\)|\(best of merge=. block_t=64 num_warps=4|\(best of merge=. block_t=32 num_warps=8" "$out/m/merge_fp8.log" | awk '{printf "%4s %s %s %s %s %8s %6s %s %s\n", $1, $2, $4, $5, $10, $11, $(NF-3), $(NF-1), $NF}'
timeout 120 $bin/tuner bench --kv bf16 --batches 32,128 --where "$where" --best-per merge \
  >"$out/m/merge_bf16.log" 2>&1
echo "== merge bf16 rc=$? $(grep -c WRONG "$out/m/merge_bf16.log") wrong"
grep -E "\(fastest\)|\(best of" "$out/m/merge_bf16.log" | awk '{printf "%4s %s %s %s %s %8s %6s %s %s\n", $1, $2, $4, $5, $10, $11, $(NF-3), $(NF-1), $NF}'
export TUNER_REQUIRE_GPU=1 TUNER_BINARY=$PWD/$bin/tuner
TUNER_GPU_MATRIX=fp8_ds_mla:4,bf16:4 timeout 330 $bin/gpu_sparse_mla_decode >"$out/m/gpu_smla.log" 2>&1
echo "gpu_sparse_mla_decode rc=$?"; grep -E "checks|test cases|assertions|FAIL|ERROR" "$out/m/gpu_smla.log" | head -12
timeout 100 $bin/gpu_tunedb_cuda >"$out/m/gpu_tunedb_cuda.log" 2>&1
echo "gpu_tunedb_cuda rc=$?"; grep -E "test cases|assertions|ERROR|merge" "$out/m/gpu_tunedb_cuda.log" | head -8
tar -C "$out" -czf "$out/s3_merge.tgz" m && rm -rf "$out/m"
