#!/usr/bin/env bash
# H200: Nsight Compute on one split-kernel config at one batch (clocks left alone).
# Usage: scripts/device_calls/h200_ncu.sh BATCH WHERE [KV]   e.g. 128 "block_t=64,...,target_ctas=256" fp8_ds_mla
set -u
source scripts/device_env.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
batch=$1; where=$2; kv=${3:-fp8_ds_mla}
ncu --clock-control none -k regex:split_pipelined -c 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
  --section MemoryWorkloadAnalysis --section LaunchStats \
  .devcarry/bin/tuner bench --kv "$kv" --batches "$batch" --where "$where" >$out/ncu_${batch}.log 2>&1
echo "ncu rc=$?"
grep -E "DRAM Throughput|Memory Throughput|Duration|Compute \(SM\)|Issue Slots Busy|Achieved Occupancy|Theoretical Occupancy|Registers Per|Stall|No Eligible|Active Warps Per|Eligible Warps|Block Limit|Dynamic Shared|L1/TEX Hit|Warp Cycles Per Issued|Mem Busy|Max Bandwidth" $out/ncu_${batch}.log | head -40
