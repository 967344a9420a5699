#!/usr/bin/env bash
# H200, tenth session (2026-12-02): why the balanced schedule (schedule 1) runs 1.24x the per-row
# splits (schedule 0) at batch 64 with the same tiles per CTA (8 against 7.76), and where its time
# goes at 136 (just past the 132-row wave edge). Nsight Compute (clocks left alone) on the split
# kernel of the winners' structure, both schedules at both batches: duration, grid, occupancy,
# issue and stall figures. (The first try, without --target-processes all, profiled only the
# combine kernels of the parent process.)
# Usage: scripts/device_calls/h200_s10_ncu.sh   (carry .devcarry; a short table is printed last; logs in $OUT)
set -u
source scripts/device_env.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
logs=$out/s10_ncu
mkdir -p "$logs"
base="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
base="$base,producers=2,merge=1,target_ctas=256"
for batch in 64 136; do
  for schedule in 0 1; do
    log=$logs/ncu_b${batch}_s${schedule}.log
    # tuner bench runs the candidates in its worker process: ncu must follow it.
    timeout 60 ncu --clock-control none --target-processes all -k regex:split_pipelined -c 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
      --section Occupancy --section LaunchStats \
      .devcarry/bin/tuner bench --batches "$batch" --where "$base,schedule=$schedule" >"$log" 2>&1
    echo "== batch $batch schedule $schedule: ncu rc=$?"
    grep -E "^  [a-z_]+.*\(|Duration|Grid Size|DRAM Throughput|Achieved Occupancy|Waves Per SM|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Registers Per|Block Limit (Registers|Shared)" \
      "$log" | sed -E 's/ +/ /g' | cut -c1-120 | head -40
  done
done
tar -C "$out" -czf "$out/s10_ncu.tgz" s10_ncu && rm -rf "$logs"
