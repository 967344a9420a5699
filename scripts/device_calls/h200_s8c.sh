#!/usr/bin/env bash
# H200, eighth session (2026-12-02), second call: the warm-rerun target with the doubled space
# (plan rows and their keys now spread over every core), then the per-row-split kernels before and
# after the balanced schedule's restructure of the pipelined kernel, in one run: the s7 tuner
# (.devcarry/bin/tuner_old, built from 19fc929) and this one, interleaved twice, each timing every
# launch variant of the winners' structure (BLOCK_T 64, 4 + 2 warps, 2 stages) at 64-512. Last,
# racecheck on .devcarry/bin/tuner_race, this tuner with every consumer thread arriving on the
# ring's `empty` mbarriers (not lane 0 after __syncwarp): is the ring-refill report then gone?
# Usage: scripts/device_calls/h200_s8c.sh   (carry .devcarry; a short table is printed last; logs in $OUT)
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
export WORK=/tmp/s8c
logs=$out/s8c
mkdir -p "$logs" "$WORK"
export TUNER_REQUIRE_GPU=1
began=$(date +%s)
left() { echo $((${BUDGET_S:-380} - $(date +%s) + began)); }
timeout 130 bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
where="$where,producers=2"
bench() {  # bench BIN ROUND
  local tuner=build/tuner/tuner per=merge,target_ctas,schedule
  [ "$1" = old ] && tuner=.devcarry/bin/tuner_old && per=merge,target_ctas
  XDG_CACHE_HOME=$WORK/cache_$1 timeout 55 $tuner bench --batches 64,128,256,512 \
    --where "$where" --no-default --best-per "$per" >"$logs/bench_${1}_$2.log" 2>&1
  echo "bench $1 round $2 rc=$?"
}
bench old 1
bench new 1
where_race="$where,target_ctas=256,schedule=0,merge=1"
for bin in race new; do
  tuner=build/tuner/tuner; [ "$bin" = race ] && tuner=.devcarry/bin/tuner_race
  XDG_CACHE_HOME=$WORK/race_$bin timeout 50 compute-sanitizer --tool racecheck $tuner bench \
    --kv fp8_ds_mla --batches 64 --where "$where_race" --no-default --launches 1 --l2 flush \
    >"$logs/racecheck_$bin.log" 2>&1
  echo "racecheck $bin rc=$? $(grep -E 'RACECHECK SUMMARY' "$logs/racecheck_$bin.log")"
done
if [ "$(left)" -gt 70 ]; then bench new 2; fi
if [ "$(left)" -gt 60 ]; then bench old 2; fi
cut -c1-200 "$logs/main.txt" | tail -n 8
for f in "$logs"/bench_*_1.log; do echo "== $f"; grep -vE "^ *$" "$f" | tail -n 30 | cut -c1-160; done
tar -C "$out" -czf "$out/s8c.tgz" s8c && rm -rf "$logs"
