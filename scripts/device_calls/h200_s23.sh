#!/usr/bin/env bash
# H200, twenty-third session.
#   timeline  where a launch's time goes: the diagnostic tuner (.devcarry/bin/tuner_timeline,
#             scripts/devcarry_variant_tuner.sh timeline SMLA_TIMELINE=100) prints every CTA's
#             %globaltimer marks of two consecutive timed launches (timeline.cuh); one bench run
#             per (batch, config), since the launch count is the module's; scripts/timeline.py
#             sums them up. Call 1 ran the first form, whose entry atomic held thread 0 (and so
#             the mbarrier init and the producers) and whose printf held the grid; call 2 the
#             second (atomic read at the end, printed two launches later). TL_BINS adds diagnostic
#             tuners of experiments (NAME: .devcarry/bin/tuner_NAME) timed at batch 64.
#             Then the tuner's own kernels of the same configs, timed as usual. TL_ONLY=1: the
#             TL_BINS runs alone.
#   ncu       Nsight Compute on the combine (and the split) of the batch-64 winner: one launch each
#             after 40, caches left as the split leaves them (--cache-control none), speed of
#             light, memory workload (L2 hit rate, DRAM bytes), scheduler and warp states. NCU_BIN
#             profiles another tuner; NCU_KERNELS (default "combine split_pipelined") picks.
#   ab        the tuner against experiment builds (AB_BINS, .devcarry/bin/tuner_NAME), rounds
#             tuner / NAME... / tuner / NAME..., the winners' structure at batches 1-256.
#             MERGES (default 2|4; call 3 ran 1|2|4) picks the merges.
# Usage: scripts/device_calls/h200_s23.sh timeline|ncu|ab   (carry .devcarry; logs in $OUT/s23_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s23.sh timeline|ncu|ab}
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
      timeout 100 ".devcarry/bin/tuner_${bin:-timeline}" bench --batches "$2" --no-default \
        --where "$common,$3" >"$logs/$1.log" 2>&1
      echo "== $1 (batch $2, $3) rc=$? at $(($(date +%s) - began)) s"
      grep -E "^ +[0-9]+ " "$logs/$1.log" | head -n 2 | cut -c1-160
      python3 scripts/timeline.py "$logs/$1.log" | sed -n '1,40p' >"$logs/$1.txt"
      grep -E "launch 100|ramp|stream|drain|epilogue|written \(|combine|past the|end |split end" \
        "$logs/$1.txt" | head -n 13
    }
    [ -n "${TL_ONLY:-}" ] || {  # TL_ONLY=1: only the TL_BINS runs
    timeline b64_m4 64 "$t64,schedule=0,merge=4,target_ctas=256"
    timeline b64_m2 64 "$t64,schedule=0,merge=2,target_ctas=256"
    timeline b64_m4_tc512 64 "$t64,schedule=0,merge=4,target_ctas=512"
    timeline b64_s1 64 "$t64,schedule=1,merge=4,target_ctas=128"
    timeline b128_m2 128 "$t64,schedule=0,merge=2,target_ctas=1024"
    timeline b1_m4 1 "block_t=32,num_stages=4,schedule=0,merge=4,target_ctas=128"
    }
    for bin in ${TL_BINS:-}; do
      timeline "b64_m4_$bin" 64 "$t64,schedule=0,merge=4,target_ctas=256"
    done
    unset bin
    [ -n "${TL_ONLY:-}" ] || timeout 150 build/tuner/tuner bench --batches 1,64,128 --no-default --top 8 \
      --where "$common,$t64,schedule=0|1,merge=2|4,target_ctas=128|256|512|1024" \
      >"$logs/plain.log" 2>&1
    echo "== plain rc=$?"
    grep -E "^ +(1|64|128) " "$logs/plain.log" | head -n 30 | cut -c1-170
    ;;
  ab)
    export XDG_CACHE_HOME=/tmp/s23_cache
    for round in 1 2; do
      for bin in tuner ${AB_BINS:-}; do
        path=.devcarry/bin/$bin
        [ "$bin" = tuner ] || path=.devcarry/bin/tuner_$bin
        timeout 100 "$path" bench --batches "${BATCHES:-1,8,32,64,128,256}" --no-default \
          --where "$common,$t64,schedule=0,merge=${MERGES:-2|4},target_ctas=256|512|1024" --best-per merge \
          >"$logs/${bin}_$round.log" 2>&1
        echo "$bin round $round rc=$? at $(($(date +%s) - began)) s"
      done
    done
    for f in "$logs"/*_[12].log; do
      echo "== $(basename "$f") (batch merge target_ctas us)"
      grep -E "^ +[0-9]+ block_t.*best of" "$f" | awk '{m = ""; c = ""; for (i = 2; i <= NF; i++) {
          if ($i ~ /^merge=/) m = $i; if ($i ~ /^target_ctas=/) c = $i; if ($i ~ /^schedule=/) k = i }
        printf "%s %s %s %s\n", $1, m, c, $(k + 1)}' | sort -n -s -k1,1 | tr '\n' ';'
      echo
    done
    ;;
  ncu)
    export XDG_CACHE_HOME=/tmp/s23_cache
    wanted="Duration|DRAM Throughput|L2 Hit|L1/TEX Hit|Memory Throughput|Executed Ipc A|Registers"
    wanted="$wanted|Achieved Occupancy|Stall|Warp Cycles Per Issued|Issue Slots Busy|dram__bytes|lts__t"
    for kernel in ${NCU_KERNELS:-combine split_pipelined}; do
      timeout 150 ncu --clock-control none --cache-control none --target-processes all \
        -k "regex:$kernel" --launch-skip 40 -c 1 --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
        --section Occupancy --section LaunchStats "${NCU_BIN:-build/tuner/tuner}" bench --batches 64 \
        --where "$common,$t64,schedule=0,merge=4,target_ctas=256" --no-default \
        >"$logs/$kernel.txt" 2>&1
      echo "== $kernel rc=$?"
      grep -E "$wanted" "$logs/$kernel.txt" | sed -E 's/ +/ /g' | cut -c1-110 | head -30
    done
    ;;
  *) echo "unknown step '$step': use timeline, ncu or ab" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s23_$step.tgz" "s23_$step" && rm -rf "$logs"
