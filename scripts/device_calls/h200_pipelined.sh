#!/usr/bin/env bash
# H200: the pipelined split-kernel paths (issue 9) against the default, verified then timed by
# `tuner bench` (every candidate is checked against the reference before it is timed).
# Usage (device machine, repo root, binaries in .devcarry): scripts/device_calls/h200_pipelined.sh [BATCHES]
set -u
source scripts/device_env.sh >/dev/null
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
batches=${1:-1,8,32,64,128}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
echo "== fp8: mma_path 1|2"
timeout 280 $bin/tuner bench --where "mma_path=1|2" --batches "$batches" --top 8 >$out/bench_fp8.log 2>&1
echo "rc=$?"; grep -E "WRONG|default|fastest|^ +[0-9]+ block" $out/bench_fp8.log | head -80
echo "== bf16: mma_path 1"
timeout 200 $bin/tuner bench --kv bf16 --where "mma_path=1" --batches "$batches" --top 4 >$out/bench_bf16.log 2>&1
echo "rc=$?"; grep -E "WRONG|default|fastest|^ +[0-9]+ block" $out/bench_bf16.log | head -40
