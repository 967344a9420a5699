#!/usr/bin/env bash
# H200, third session of 2026-12-01: the pipelined kernel before/after the codegen fixes
# (32-bit shared addresses, slice-specialized score items with SEGMENT_UNROLL latent segments per
# loop body, ex2.approx softmax with skipped rescales, sleeping producers), one tuner binary per
# variant (.devcarry/ab/tuner_*), the same configs and batches, one run.
set -u
source scripts/device_env.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out/ab"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
where="mma_path=1,kv_unpack=0,ctas_per_sm=1,block_t=32|64,num_warps=4|8,num_stages=2|4,producers=2"
for v in ${VARIANTS:-head u1 u2 u4 u2_nosleep head}; do
  log="$out/ab/$v.log"; [ -e "$log" ] && log="$out/ab/${v}_again.log"
  timeout 150 .devcarry/ab/tuner_$v bench --batches 8,64,128 --where "$where" \
    --best-per block_t,num_warps >"$log" 2>&1
  echo "== $v rc=$? $(grep -c WRONG "$log") wrong"
  grep -E "\(fastest\)|\(best of" "$log" | awk '{printf "%4s %s %s %s %s %8s %s %s\n", $1, $2, $4, $5, $10, $11, $(NF-1), $NF}'
done
tar -C "$out" -czf "$out/s3_ab.tgz" ab && rm -rf "$out/ab"
