#!/usr/bin/env bash
# H200, third session: the new batch-128 winner's SASS profile (as h200_s3_probe.sh), and the
# split vs combine kernel durations of the winner at batch 64 and 128.
set -u
source scripts/device_env.sh >/dev/null
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out/logs"
winner="mma_path=1,kv_unpack=0,ctas_per_sm=1,block_t=64,num_warps=4,num_stages=2,producers=2,target_ctas=256"
timeout 200 ncu --clock-control none --set full --import-source yes -k regex:split_pipelined -c 1 \
  -o "$out/logs/prof_b128" $bin/tuner bench --batches 128 --where "$winner" >"$out/logs/ncu_run.log" 2>&1
echo "ncu rc=$?"
ncu -i "$out/logs/prof_b128.ncu-rep" --page source --csv --print-source sass >"$out/logs/sass_b128.csv" 2>&1
ncu -i "$out/logs/prof_b128.ncu-rep" --page details >"$out/logs/details_b128.txt" 2>&1
grep -E "Executed Ipc A|Issue Slots Busy|Executed Instructions  |Registers Per|Duration|DRAM Throughput|Achieved Occupancy|Warp Cycles Per Issued|Block Limit" "$out/logs/details_b128.txt" | head -20
python3 scripts/ncu_sass_summary.py "$out/logs/sass_b128.csv" 30 >"$out/logs/sass_summary.txt" 2>&1
head -40 "$out/logs/sass_summary.txt"
for b in 64 128; do
  timeout 120 ncu --clock-control none --section SpeedOfLight -k regex:"split_pipelined|combine" -c 6 \
    $bin/tuner bench --batches $b --where "$winner" >"$out/logs/kernels_b$b.log" 2>&1
  echo "== batch $b"; grep -E "sparse_mla_decode_(split|combine)|Duration|DRAM Throughput" "$out/logs/kernels_b$b.log" | sed 's/(smla::SplitParams)//' | cut -c1-110 | tail -8
done
tar -C "$out" -czf "$out/s3_probe2.tgz" logs && rm -rf "$out/logs"
