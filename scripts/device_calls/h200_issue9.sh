#!/usr/bin/env bash
# H200, issue 9: the correctness matrix of every split-kernel variant (gpu_sparse_mla_decode), then
# the fastest config of every structural variant (mma_path x producers) per batch, fp8 and bf16 KV.
# Usage (device machine, repo root, binaries in .devcarry/bin): scripts/device_calls/h200_issue9.sh
set -u
source scripts/device_env.sh >/dev/null
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
echo "== gpu_sparse_mla_decode: every config the rules allow x batch {1,7,64,128} x topk {2048,600,5}"
/usr/bin/time -f "wall %e s" env TUNER_GPU_LOG=$out/checks.log timeout 420 \
  $bin/gpu_sparse_mla_decode >$out/gpu_smla.log 2>&1
echo "rc=$?"
grep -E "^(fp8|bf16|kv) |checks run|4M-token|GPU vs CPU|test cases|assertions|FAIL|wall" \
  $out/gpu_smla.log | head -70
gzip -f $out/checks.log
variants="block_t=32|64,num_warps=4|8,num_stages=1|2|3|4"
echo "== fp8: fastest per (mma_path, producers)"
timeout 260 $bin/tuner bench --where "$variants" --best-per mma_path,producers \
  --batches 1,8,32,64,128 >$out/variants_fp8.log 2>&1
echo "rc=$?"; grep -E "^device|best of|WRONG" $out/variants_fp8.log | head -60
echo "== bf16: fastest per (mma_path, producers)"
timeout 150 $bin/tuner bench --kv bf16 --where "$variants" --best-per mma_path,producers \
  --batches 1,32,128 >$out/variants_bf16.log 2>&1
echo "rc=$?"; grep -E "^device|best of|WRONG" $out/variants_bf16.log | head -30
