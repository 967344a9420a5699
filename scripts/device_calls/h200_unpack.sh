#!/usr/bin/env bash
# H200, issue 9, kv_unpack: the e4m3 -> f16 conversion micro-benchmark and pipe profile
# (h200_pipes.sh), the correctness matrix of fp8 at 16 local heads (every config the rules allow,
# the new unpacks included), and the fastest config of each kv_unpack per batch.
# Usage (device machine, repo root, binaries in .devcarry/bin): scripts/device_calls/h200_unpack.sh
set -u
source scripts/device_env.sh >/dev/null
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
winner="block_t=64,block_h=16,num_warps=4,num_stages=2,mma_path=1,producers=2,target_ctas=256"
bash scripts/device_calls/h200_pipes.sh 128 "$winner,kv_unpack=0" 2>&1 | tail -45
OUT=$out/bits bash -c "mkdir -p $out/bits; bash scripts/device_calls/h200_pipes.sh 128 '$winner,kv_unpack=1'" 2>&1 |
  grep -E "ncu rc|pipe_(alu|fma|fp16|xu|lsu|tensor|uniform)|hmma|issue_active|duration|stalled_(barrier|long|short|math|mio|wait|branch|not_sel)" | head -30
echo "== gpu_sparse_mla_decode fp8, 16 local heads: every config x batch {1,7,64,128} x topk"
/usr/bin/time -f "wall %e s" env TUNER_GPU_MATRIX=fp8_ds_mla:4 TUNER_GPU_LOG=$out/checks.log \
  timeout 240 $bin/gpu_sparse_mla_decode >$out/gpu_smla.log 2>&1
echo "rc=$?"
grep -E "^(fp8|bf16|kv) |checks run|test cases|assertions|FAIL|wall" $out/gpu_smla.log | head -20
gzip -f $out/checks.log
echo "== fp8: fastest per kv_unpack (mma_path 1)"
timeout 200 $bin/tuner bench --where "mma_path=1,block_t=32|64,num_warps=4|8,num_stages=2|3|4" \
  --best-per kv_unpack,producers --batches 1,8,32,64,128 >$out/unpack_fp8.log 2>&1
echo "rc=$?"; grep -E "^device|best of|fastest|WRONG" $out/unpack_fp8.log | head -60
