#!/usr/bin/env bash
# H200: where the pipelined split kernel's issue slots go. (1) bench/device/cvt_throughput.cu:
# e4m3 -> f16 by F2FP vs the bitwise unpack; (2) Nsight Compute pipe utilization and stall reasons
# of one config at one batch (clocks left alone).
# Usage: scripts/device_calls/h200_pipes.sh BATCH WHERE [KV]     (logs under $OUT)
set -u
source scripts/device_env.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
batch=$1; where=$2; kv=${3:-fp8_ds_mla}
nvcc -O3 -arch=sm_90 -I templates bench/device/cvt_throughput.cu -o "$out/cvt" &&
  "$out/cvt" | tee "$out/cvt_throughput.log"
cuobjdump -sass "$out/cvt" | awk '/convert_loopILi2/,/EXIT/' | grep -cE "LOP3|SHF|IMAD|LEA|PRMT" |
  sed 's/^/bitwise loop: integer instructions in the kernel body: /'
rm -f "$out/cvt"
ncu --clock-control none -k regex:split_pipelined -c 1 \
  --metrics "regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum" \
  .devcarry/bin/tuner bench --kv "$kv" --batches "$batch" --where "$where" >"$out/ncu_pipes_${batch}.log" 2>&1
echo "ncu rc=$?"
grep -E "pct_of_peak|ratio|duration" "$out/ncu_pipes_${batch}.log" |
  awk '{v=$NF; gsub(",","",v); if (v+0 >= 0.05) print}' | head -60
