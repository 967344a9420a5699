#!/usr/bin/env bash
# H200, eighth session (2026-12-02), second call: the warm-rerun target with the doubled space
# (plan rows and their keys now spread over every core), then the per-row-split kernels before and
# after the balanced schedule's restructure of the pipelined kernel, in one run: the s7 tuner
# (.devcarry/bin/tuner_old, built from 19fc929) and this one, interleaved twice, each timing every
# launch variant of the winners' structure (BLOCK_T 64, 4 + 2 warps, 2 stages) at 64-512.
# Usage: scripts/h200_s8c.sh   (carry .devcarry; a short table is printed last; logs in $OUT)
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
export WORK=/tmp/s8c
logs=$out/s8c
mkdir -p "$logs" "$WORK"
export TUNER_REQUIRE_GPU=1
timeout 170 bash scripts/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
where="$where,producers=2"
for round in 1 2; do
  for bin in old new; do
    tuner=build/tuner/tuner; per=merge,target_ctas,schedule
    [ "$bin" = old ] && tuner=.devcarry/bin/tuner_old && per=merge,target_ctas
    XDG_CACHE_HOME=$WORK/cache_$bin timeout 100 $tuner bench --batches 64,128,256,512 \
      --where "$where" --no-default --best-per "$per" >"$logs/bench_${bin}_$round.log" 2>&1
    echo "bench $bin round $round rc=$?"
  done
done
cut -c1-200 "$logs/main.txt" | tail -n 8
for f in "$logs"/bench_*_2.log; do echo "== $f"; grep -vE "^ *$" "$f" | tail -n 30 | cut -c1-160; done
tar -C "$out" -czf "$out/s8c.tgz" s8c && rm -rf "$logs"
