#!/usr/bin/env bash
# H200, 2026-12-02: the cluster merge (merge 2: the splits of a (head group, batch item) as one
# thread-block cluster merging in distributed shared memory, no combine kernel) against the
# combine kernel (merge 0) and its programmatic launch (merge 1), one run:
#   1. tuner bench, fp8 then bf16: the pipelined winners' structure (BLOCK_T 64, 2 stages, 2
#      producer warps, 4 or 8 consumer warps), TARGET_CTAS 128/256/512, every merge value, best per
#      merge at batches 1-256 (each config checked against the reference before it is timed)
#   2. the default sweep, cold and warm (scripts/device_calls/h200_issue12_s4.sh main: < 120 s and < 5 s)
#   3. the fp8 16-head correctness matrix (merge 2 on every pipelined compile key) with the time
#      left, then the bf16 one
# Carry .devcarry (scripts/devcarry_refresh.sh). A short table is printed last; logs in $OUT.
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
logs=$out/s6
mkdir -p "$logs"
export TUNER_REQUIRE_GPU=1
began=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4|8"
where="$where,producers=2,target_ctas=128|256|512"
row() {  # batch, config's merge/target/warps, median, %copyBW, label
  grep -E "\(fastest\)|\(best of" "$1" |
    awk '{printf "%4s %-4s %s %s %s %8s %7s", $1, v, $4, $10, $11, $12, $19
          for (i = 21; i <= NF; i++) printf " %s", $i; print ""}' v="$2"
}
for kv in fp8_ds_mla bf16; do
  timeout 170 build/tuner/tuner bench --kv "$kv" --batches 1,8,32,64,128,256 --where "$where" \
    --best-per merge >"$logs/bench_$kv.log" 2>&1
  echo "== bench $kv rc=$? wrong=$(grep -c WRONG "$logs/bench_$kv.log")"
done
WORK=/tmp/s6 bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/sweep.txt" 2>&1
cp /tmp/s6/cold.log /tmp/s6/warm.log "$logs/" 2>/dev/null
left=$((560 - $(date +%s) + began))
for part in fp8_ds_mla:4 bf16:4; do
  [ "$left" -gt 30 ] || break
  limit=$((left / 2 > 40 ? left / 2 : left))
  TUNER_GPU_MATRIX=$part timeout "$limit" build/tests/gpu_sparse_mla_decode -tc="every config*" \
    >"$logs/matrix_${part%%:*}.log" 2>&1
  echo "matrix $part rc=$? (limit ${limit} s) $(grep -cE '^(fp8_ds_mla|bf16) ' "$logs/matrix_${part%%:*}.log") rows, failures: $(grep -c 'FAILED\|ERROR' "$logs/matrix_${part%%:*}.log")"
  left=$((560 - $(date +%s) + began))
done
tar -C "$out" -czf "$out/s6.tgz" s6
echo "---- sweep"; tail -n 8 "$logs/sweep.txt" | cut -c1-220
for kv in fp8_ds_mla bf16; do echo "---- $kv (batch merge... median %copyBW)"; row "$logs/bench_$kv.log" "$kv"; done
