#!/usr/bin/env bash
# H200, twenty-second session. Schedule 2 ran on 0101e70 (call 1: probe) and on 194dc0f's kernels
# (call 2: probe, ncu); it was measured to lose and reverted in 54eb69b, so these steps need one of
# those trees.
#   probe   two consumer groups (schedule 2, schedule.h): one CTA an SM whose 2 x 4 consumer warps
#           take the split's tiles in turn, sharing q, the producers and a 2- or 4-stage ring, at
#           half the splits of schedule 0. Against the winners' structure (BLOCK_T 64, 4 + 2 warps,
#           2 stages, schedule 0, two CTAs an SM) in the same run, rounds s0 / s2 / s0 / s2, merges
#           1 / 2 / 4, the fastest launch per structure and merge at batches 1-512 (fp8; bench
#           verifies every config at every batch before timing it).
#           Predicted before the run: batch 64 at 128 CTAs, 2 splits a row: the tiles stream as two
#           CTAs an SM do (8 consumer warps an SM), with half the q loads and partials; the combine
#           reads 2 partials a row instead of 4: -0.5 to -1.5 us (34.45 -> ~33.3). Batch 128 at one
#           split a row needs no merge at all: -1 to -3 us against merge 2's 54.1. 256 / 512 lose
#           (one CTA an SM over 256+ rows is two waves).
#   check   correctness of schedule 2 alone (TUNER_GPU_MATRIX_SCHEDULES=2): the repeat test and
#           the matrix parts in PARTS (default: fp8 at 16, 32, 64 heads).
#   ncu     Nsight Compute (speed of light, scheduler, warp states) on one split launch at batch
#           128: schedule 0's winner (2 CTAs an SM, merge 2) against schedule 2 (one CTA, 4 stages,
#           one split a row).
# BATCHES (probe) overrides the batches.
# Usage: scripts/device_calls/h200_s22.sh probe|ncu|check   (carry .devcarry; logs in $OUT/s22_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s22.sh probe|ncu|check}
source scripts/device_call_env.sh
logs=$out/s22_$step
mkdir -p "$logs"
common="block_h=16,kv_unpack=0,ctas_per_sm=1,mma_path=1,producers=2,num_warps=4"
case $step in
  probe)
    export XDG_CACHE_HOME=/tmp/s22_cache
    s0="$common,schedule=0,block_t=64,num_stages=2,merge=1|2|4"
    s2="$common,schedule=2,block_t=32|64,num_stages=2|4,merge=1|2|4"
    for round in 1 2; do
      timeout 120 build/tuner/tuner bench --batches "${BATCHES:-1,8,32,64,128,256,512}" --no-default \
        --where "$s0" --best-per merge >"$logs/s0_$round.log" 2>&1
      echo "s0 round $round rc=$? at $(($(date +%s) - began)) s"
      timeout 200 build/tuner/tuner bench --batches "${BATCHES:-1,8,32,64,128,256,512}" --no-default \
        --where "$s2" --best-per block_t,num_stages,merge >"$logs/s2_$round.log" 2>&1
      echo "s2 round $round rc=$? at $(($(date +%s) - began)) s"
    done
    for f in "$logs"/s0_1.log "$logs"/s2_1.log "$logs"/s0_2.log "$logs"/s2_2.log; do
      echo "== $(basename "$f") (batch block_t stages merge target median %copy)"
      grep -E "^ +[0-9]+ block_t.*best of" "$f" | awk '{b = ""; s = ""; m = ""; c = "";
        for (i = 2; i <= NF; i++) { if ($i ~ /^block_t=/) b = $i; if ($i ~ /^num_stages=/) s = $i;
          if ($i ~ /^merge=/) m = $i; if ($i ~ /^target_ctas=/) c = $i; if ($i ~ /^schedule=/) k = i }
        printf "%s %s %s %s %s %s %s\n", $1, b, s, m, c, $(k + 1), $(k + 8)}' | sort -n -s -k1,1
    done
    grep -hE "WRONG|wrong|error" "$logs"/*.log | head -n 10 | cut -c1-300
    ;;
  ncu)
    export XDG_CACHE_HOME=/tmp/s22_cache
    wanted="Duration|DRAM Throughput|Executed Ipc A|Registers Per|Achieved Occupancy|Stall|"
    wanted="${wanted}Warp Cycles Per Issued|Issue Slots Busy|Block Limit"
    # NAME WHERE: one split kernel launch at batch 128, Nsight Compute's speed, scheduler and warp
    # state sections.
    profile() {
      timeout 120 ncu --clock-control none --target-processes all -k regex:split_pipelined -c 1 \
        --section SpeedOfLight --section SchedulerStats --section WarpStateStats \
        --section Occupancy --section LaunchStats build/tuner/tuner bench --batches 128 \
        --where "$2" --no-default >"$logs/$1.txt" 2>&1
      echo "== $1 rc=$?"
      grep -E "$wanted" "$logs/$1.txt" | sed -E 's/ +/ /g' | cut -c1-110 | head -24
    }
    profile s0 "$common,schedule=0,block_t=64,num_stages=2,merge=2,target_ctas=256"
    profile s2 "$common,schedule=2,block_t=64,num_stages=4,merge=1,target_ctas=128"
    ;;
  check)
    source scripts/matrix_check.sh
    export TUNER_GPU_MATRIX_SCHEDULES=2
    matrix_check "$logs" /tmp/s22_cubins "${PARTS:-fp8_ds_mla:4 fp8_ds_mla:2 fp8_ds_mla:1}" \
      "${REPEAT_S:-200}" "${BUDGET_S:-540}"
    ;;
  *) echo "unknown step '$step': use probe, ncu or check" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s22_$step.tgz" "s22_$step" && rm -rf "$logs"
