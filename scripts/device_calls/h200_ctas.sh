#!/usr/bin/env bash
# H200, issue 9, ctas_per_sm: the fastest config of each (launch-bound CTAs per SM, warps,
# producers) per batch, fp8 KV on mma_path 1; then Nsight Compute on the batch-128 winner.
# Usage (device machine, repo root, binaries in .devcarry/bin): scripts/device_calls/h200_ctas.sh
set -u
source scripts/device_env.sh >/dev/null
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 330 $bin/tuner bench \
  --where "mma_path=1,kv_unpack=0,block_t=32|64,num_warps=4|8,num_stages=2|3,producers=0|1|2" \
  --best-per ctas_per_sm,num_warps,producers --batches 1,8,32,64,128 >$out/ctas_fp8.log 2>&1
echo "rc=$?"; grep -E "^device|fastest|WRONG|default" $out/ctas_fp8.log | cut -c1-175
for b in 64 128; do
  grep -E "^ +$b " $out/ctas_fp8.log | sort -k10 -n | head -8 | cut -c1-175
done
