#!/usr/bin/env bash
# H200, third session of 2026-12-01, first call: (1) where the batch-128 fp8 winner spends its
# issue slots: Nsight Compute's source page (SASS, per instruction: executed count and stall
# samples), summarized per opcode and as the hottest lines (scripts/ncu_sass_summary.py);
# (2) issue 11's before/after in one run: the default config and the batch-1/8 winners timed with
# --l2 none (the protocol before issue 11), sets and flush.
set -u
source scripts/device_env.sh >/dev/null
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out/logs"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
winner="mma_path=1,kv_unpack=0,ctas_per_sm=1,block_t=64,num_warps=4,num_stages=2,producers=2,target_ctas=256"
timeout 200 ncu --clock-control none --set full --import-source yes -k regex:split_pipelined -c 1 \
  -o "$out/logs/prof_b128" $bin/tuner bench --batches 128 --where "$winner" >"$out/logs/ncu_run.log" 2>&1
echo "ncu rc=$?"; tail -3 "$out/logs/ncu_run.log"
ncu -i "$out/logs/prof_b128.ncu-rep" --page source --csv --print-source sass >"$out/logs/sass_b128.csv" 2>&1
echo "source page rc=$? lines=$(wc -l <"$out/logs/sass_b128.csv")"
ncu -i "$out/logs/prof_b128.ncu-rep" --page details >"$out/logs/details_b128.txt" 2>&1
grep -E "Executed Ipc|Issue Slots Busy|Executed Instructions |Registers Per|Duration|DRAM Throughput|Achieved Occupancy|Warp Cycles Per Issued|One or More Eligible" "$out/logs/details_b128.txt" | head -20
python3 scripts/ncu_sass_summary.py "$out/logs/sass_b128.csv" >"$out/logs/sass_summary.txt" 2>&1
echo "summary rc=$?"; head -90 "$out/logs/sass_summary.txt"
w1="mma_path=0,block_t=64,num_warps=8,num_stages=2,producers=0,target_ctas=128"
w8="mma_path=1,kv_unpack=0,ctas_per_sm=1,block_t=32,num_warps=8,num_stages=4,producers=2,target_ctas=128"
for mode in none sets flush; do
  for w in "$w1" "$w8"; do
    timeout 100 $bin/tuner bench --batches 1,8 --l2 $mode --where "$w" >>"$out/logs/i11_l2_$mode.log" 2>&1
  done
  echo "== --l2 $mode"; grep -E "^ +(1|8) " "$out/logs/i11_l2_$mode.log" | cut -c1-150
done
rm -f "$out/logs/prof_b128.ncu-rep.bak"
tar -C "$out" -czf "$out/s3_probe.tgz" logs && rm -rf "$out/logs"
