#!/usr/bin/env bash
# H200, fourth session of 2026-12-01: the combine rewrite (dims cut into chunks, 8 loads in flight,
# lse reduced per warp), paired partial stores and programmatic dependent launch of the combine
# (pdl), against the previous tree, one tuner binary each (.devcarry/ab/tuner_head = 13bcd54,
# .devcarry/bin/tuner = this tree), the same configs and batches, one run. Then Nsight Compute
# durations of split and combine at batches 1 and 64 (new binary, caches left alone).
# VARIANTS (default "head new") and WHERE_SETS (default "pipe"; also "seeds") choose the rows.
set -u
source scripts/device_env.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out/ab"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
common="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,target_ctas=128|256|512"
seeds="$common,mma_path=0,num_warps=8,producers=0"
pipe="$common,mma_path=1,num_warps=4|8,producers=2"
row() { grep -E "\(fastest\)|\(best of" "$1" | awk '{printf "%4s %-10s %s %s %s %s %8s %7s %s %s\n", $1, v, $4, $5, $7, $10, $11, $(NF-3), $(NF-1), $NF}' v="$2"; }
for v in ${VARIANTS:-head new}; do
  bin=.devcarry/bin/tuner; [ "$v" = head ] && bin=.devcarry/ab/tuner_head
  per=""; [ "$v" = new ] && per="--best-per pdl"
  for w in ${WHERE_SETS:-pipe}; do
    where=${!w}; [ "$v" = new ] && where="$where,pdl=0|1"
    log="$out/ab/${v}_$w.log"; [ -e "$log" ] && log="$out/ab/${v}_${w}_again.log"
    timeout 150 $bin bench --batches 1,8,32,64,128,256 --where "$where" $per >"$log" 2>&1
    echo "== $v $w rc=$? $(grep -c WRONG "$log") wrong"; row "$log" "$v"
  done
done
winner="mma_path=1,kv_unpack=0,ctas_per_sm=1,block_t=64,num_warps=4,num_stages=2,producers=2,target_ctas=256"
for b in 1 64; do
  w=$winner; [ $b = 1 ] && w="mma_path=0,kv_unpack=0,ctas_per_sm=1,block_t=64,num_warps=8,num_stages=2,producers=0,target_ctas=128"
  for pdl in 0 1; do
    timeout 100 ncu --clock-control none --cache-control none --section SpeedOfLight \
      -k regex:"split|combine" -c 2 .devcarry/bin/tuner bench --batches $b --where "$w,pdl=$pdl" --no-default \
      >"$out/ab/ncu_b${b}_pdl$pdl.log" 2>&1
    echo "== ncu batch $b pdl $pdl (rc=$?)"
    grep -E "sparse_mla_decode_(split|combine)|Duration" "$out/ab/ncu_b${b}_pdl$pdl.log" |
      sed 's/(smla::[A-Za-z]*Params)//' | cut -c1-100 | tail -4
  done
done
tar -C "$out" -czf "$out/s4_ab.tgz" ab && rm -rf "$out/ab"
