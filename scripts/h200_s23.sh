#!/usr/bin/env bash
# H200, twenty-third session.
#   timeline  where a launch's time goes: the diagnostic tuner (.devcarry/bin/tuner_timeline,
#             scripts/devcarry_timeline_tuner.sh) prints every CTA's %globaltimer marks of two
#             consecutive timed launches (templates/sparse_mla_decode/timeline.cuh); one bench
#             run per (batch, config), since the launch count is the module's; scripts/timeline.py
#             sums them up. Then the tuner's own kernels of the same configs, timed as usual, so
#             that the diagnostic's cost is in the log too.
# Usage: scripts/h200_s23.sh timeline   (carry .devcarry; logs in $OUT/s23_STEP.tgz)
step=${1:?usage: scripts/h200_s23.sh timeline}
source scripts/device_call_env.sh
logs=$out/s23_$step
mkdir -p "$logs"
common="block_h=16,kv_unpack=0,ctas_per_sm=1,mma_path=1,producers=2,num_warps=4"
t64="block_t=64,num_stages=2"
case $step in
  timeline)
    export XDG_CACHE_HOME=/tmp/s23_cache
    # NAME BATCH WHERE: one diagnostic bench run, summed up.
    timeline() {
      timeout 100 .devcarry/bin/tuner_timeline bench --batches "$2" --no-default \
        --where "$common,$3" >"$logs/$1.log" 2>&1
      echo "== $1 (batch $2, $3) rc=$? at $(($(date +%s) - began)) s"
      grep -E "^ +[0-9]+ " "$logs/$1.log" | head -n 2 | cut -c1-160
      python3 scripts/timeline.py "$logs/$1.log" | sed -n '1,40p' >"$logs/$1.txt"
      grep -E "launch 100|ramp|stream|drain|epilogue|written \(|combine|past the|end |split end" \
        "$logs/$1.txt" | head -n 13
    }
    timeline b64_m4 64 "$t64,schedule=0,merge=4,target_ctas=256"
    timeline b64_m2 64 "$t64,schedule=0,merge=2,target_ctas=256"
    timeline b64_m4_tc512 64 "$t64,schedule=0,merge=4,target_ctas=512"
    timeline b64_s1 64 "$t64,schedule=1,merge=4,target_ctas=128"
    timeline b128_m2 128 "$t64,schedule=0,merge=2,target_ctas=1024"
    timeline b1_m4 1 "block_t=32,num_stages=4,schedule=0,merge=4,target_ctas=128"
    timeout 150 build/tuner/tuner bench --batches 1,64,128 --no-default --top 8 \
      --where "$common,$t64,schedule=0|1,merge=2|4,target_ctas=128|256|512|1024" \
      >"$logs/plain.log" 2>&1
    echo "== plain rc=$?"
    grep -E "^ +(1|64|128) " "$logs/plain.log" | head -n 30 | cut -c1-170
    ;;
  *) echo "unknown step '$step': use timeline" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s23_$step.tgz" "s23_$step" && rm -rf "$logs"
