#!/usr/bin/env bash
# H200, eleventh session (2026-12-02): where schedule 1 (balanced tiles) loses 21 % to schedule 0
# (per-row splits) inside the split kernel at batch 64, with the same tiles per SM (the tenth
# session's h200_s10_ncu.sh measured 40.42 against 33.28 µs). Nsight Compute's full set with the
# source page, both schedules: per-opcode executed instructions and stall samples and the hottest
# SASS lines (scripts/ncu_sass_summary.py), and the two details pages side by side.
# Usage: scripts/device_calls/h200_s11_ncu.sh   (carry .devcarry; logs in $OUT/s11_ncu.tgz; summary last)
set -u
source scripts/device_env.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
logs=$out/s11_ncu
mkdir -p "$logs"
base="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
base="$base,producers=2,merge=1,target_ctas=256"
wanted="Duration|DRAM Throughput|Executed Ipc A|Issue Slots Busy|Executed Instructions |"
wanted="${wanted}Warp Cycles Per Issued|Registers Per|Achieved Occupancy|L2 Hit Rate|L1/TEX Hit"
for schedule in 0 1; do
  rep=$logs/b64_s$schedule
  # tuner bench runs the candidates in its worker process: ncu must follow it.
  timeout 150 ncu --clock-control none --target-processes all --set full --import-source yes \
    -k regex:split_pipelined -c 1 -o "$rep" .devcarry/bin/tuner bench --batches 64 \
    --where "$base,schedule=$schedule" >"$rep.run.log" 2>&1
  echo "== schedule $schedule: ncu rc=$?"
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.sass.csv" 2>&1
  ncu -i "$rep.ncu-rep" --page details >"$rep.details.txt" 2>&1
  python3 scripts/ncu_sass_summary.py "$rep.sass.csv" 40 >"$rep.summary.txt" 2>&1
  grep -E "$wanted" "$rep.details.txt" | sed -E 's/ +/ /g' | cut -c1-110 | head -14
  rm -f "$rep.sass.csv"
done
for schedule in 0 1; do echo "== schedule $schedule"; head -45 "$logs/b64_s$schedule.summary.txt"; done
tar -C "$out" -czf "$out/s11_ncu.tgz" s11_ncu && rm -rf "$logs"
