#!/usr/bin/env bash
# Device steps written in the thirty-first session (2026-12-05); any sm_90 card (H200 or H100):
#   ab        the combine waiting for its own row's splits instead of the whole split grid
#             (SMLA_EXP_ROW_COUNTS in timeline.cuh; .devcarry/bin/tuner_rowcount from
#             `scripts/devcarry_variant_tuner.sh rowcount SMLA_EXP_ROW_COUNTS`) against this
#             tree's tuner: the winners' structure (BLOCK_T 64, 4 + 2 warps, 2 stages, mma_path 1,
#             schedule 0), merges 1 and 4 at every target_ctas, the fastest launch per merge, two
#             rounds on one machine. `tuner bench` verifies every config against the reference first.
#   timeline  batch 64's winner (merge 4, target_ctas 256) in the diagnostic timeline, without
#             (.devcarry/bin/tuner_timeline: SMLA_TIMELINE=100) and with the row counts
#             (.devcarry/bin/tuner_tlrc: SMLA_TIMELINE=100 SMLA_EXP_ROW_COUNTS).
#   all       ab, then timeline.
#   epilogue  where the split's epilogue goes (the timeline's marks after the row sums' gather and
#             after the programmatic-dependent trigger, added with this step):
#             .devcarry/bin/tuner_timeline
#             (SMLA_TIMELINE=100) at batch 64 (merge 4, target_ctas 256) and 128 (target_ctas 0).
#   ncu       Nsight Compute's source page (warp-stall samples a SASS line, densest sampling) of
#             batch 64's winner split kernel (merge 4, target_ctas 256), one launch: which lines of
#             the epilogue (from the dependents' trigger, PREEXIT, to EXIT) the warps stall on.
#             The source page comes back as ncu_b64.sass.csv.gz for scripts/ncu_sass_summary.py.
#   lean      the split's output code for merge 4 and whole rows only (SMLA_EXP_LEAN_OUTPUT;
#             .devcarry/bin/tuner_lean, and tuner_tllean with SMLA_TIMELINE=100 too) against this
#             tree's, and the hoisted form (SMLA_EXP_HOISTED_OUTPUT, tuner_hoist: each format's
#             stores in a loop of its own): merge 4 at batches 32-256, two rounds; then batch 64's
#             timeline of this tree and lean.
#   probe     ncu, then lean.
#   wide      the fp8 cache's output in stores of 4 adjacent dims (SMLA_EXP_WIDE_OUTPUT;
#             .devcarry/bin/tuner_wide, and tuner_tlwide with SMLA_TIMELINE=100 too) against this
#             tree's: merges 1 and 4 at batches 1-256, two rounds; then batch 64's timeline.
#   check     the 4-dim output stores (b0ee4fa) against the tree before them (.devcarry/bin/tuner_old,
#             1acbf49's build, whose switch was off): merges 1, 2 and 4 at batches 1-256, two
#             rounds; then gpu_sparse_mla_whole_rows and, in the call's remaining budget (BUDGET_S,
#             default 560), the 16-head fp8 part of the correctness matrix (h200_s15.sh matrix).
# Usage: scripts/device_calls/h200_s31.sh ab|timeline|all|epilogue|ncu|lean|probe|wide|check
#   (carry .devcarry; logs in $OUT/s31_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s31.sh ab|timeline|all|epilogue|ncu|lean|probe|wide|check}
source scripts/device_call_env.sh
source scripts/bench_ab.sh
logs=$out/s31_$step
mkdir -p "$logs"
common="block_h=16,kv_unpack=0,ctas_per_sm=1,mma_path=1,producers=2,num_warps=4"
winners="$common,block_t=64,num_stages=2,schedule=0"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
ab() {
  AB_BUILDS="new rowcount" bench_ab "$logs" "${BATCHES:-1,8,32,64,128,256}" \
    "$winners,merge=1|4,target_ctas=0|256|512|1024" merge
  AB_BUILDS="new rowcount" bench_ab_summary "$logs" merge target_ctas
}
# tl_run BIN NAME BATCH TARGET_CTAS PATTERN: one timeline run of .devcarry/bin/tuner_BIN at BATCH
# (the winners, merge 4), its summary into NAME.txt, the lines PATTERN matches of its launch 100.
tl_run() {
  XDG_CACHE_HOME=/tmp/s31_tl_cache timeout 100 ".devcarry/bin/tuner_$1" bench --batches "$3" \
    --no-default --where "$winners,merge=4,target_ctas=$4" >"$logs/$2.log" 2>&1
  echo "== $2 rc=$? at $(($(date +%s) - began)) s"
  python3 scripts/timeline.py "$logs/$2.log" | sed -n '1,50p' >"$logs/$2.txt"
  sed -n '1,/^launch 101/p' "$logs/$2.txt" | grep -E "$5"
  gzip "$logs/$2.log"
}
timeline() {
  local pattern="launch 100|drain|epilogue|written \(|combine|past the|end |split end"
  tl_run timeline tl_timeline 64 256 "$pattern"
  tl_run tlrc tl_tlrc 64 256 "$pattern"
}
epilogue() {
  local pattern="drain|epilogue|of it|written \(|each SM|end "
  tl_run timeline ep_b64 64 256 "$pattern"
  tl_run timeline ep_b128 128 0 "$pattern"
}
ncu_epilogue() {
  local rep=$logs/ncu_b64
  XDG_CACHE_HOME=/tmp/s31_ncu_cache timeout 200 ncu --clock-control none --target-processes all \
    --set full --import-source yes --warp-sampling-interval 0 -k regex:split_pipelined -c 1 \
    -o "$rep" build/tuner/tuner bench --batches 64 --no-default \
    --where "$winners,merge=4,target_ctas=256" >"$rep.run.log" 2>&1
  echo "== ncu rc=$? at $(($(date +%s) - began)) s"
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.sass.csv" 2>&1
  ncu -i "$rep.ncu-rep" --page details >"$rep.details.txt" 2>&1
  python3 scripts/ncu_sass_summary.py "$rep.sass.csv" 30 >"$rep.summary.txt" 2>&1
  grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy" "$rep.details.txt" | head -6
  head -3 "$rep.summary.txt"
  gzip "$rep.sass.csv"
  rm -f "$rep.ncu-rep"
}
lean() {
  AB_BUILDS=${LEAN_BUILDS:-new lean hoist} bench_ab "$logs" 32,64,128,256 \
    "$winners,merge=4,target_ctas=0|256|512" merge
  AB_BUILDS=${LEAN_BUILDS:-new lean hoist} bench_ab_summary "$logs" merge target_ctas
  tl_run timeline tl_timeline 64 256 "epilogue|of it|split end"
  tl_run tllean tl_tllean 64 256 "epilogue|of it|split end"
}
wide() {
  AB_BUILDS="new wide" bench_ab "$logs" 1,8,32,64,128,256 \
    "$winners,merge=1|4,target_ctas=0|256|512|1024" merge
  AB_BUILDS="new wide" bench_ab_summary "$logs" merge target_ctas
  tl_run timeline tl_timeline 64 256 "epilogue|of it|split end"
  tl_run tlwide tl_tlwide 64 256 "epilogue|of it|split end"
}
check() {
  bench_ab "$logs" 1,8,32,64,128,256 "$winners,merge=1|2|4,target_ctas=0|256|512|1024" merge
  bench_ab_summary "$logs" merge target_ctas
  run_gpu_test "$logs/whole_rows.log" 150 gpu_sparse_mla_whole_rows
  BUDGET_S=$((${BUDGET_S:-560} - $(date +%s) + began)) bash scripts/device_calls/h200_s15.sh matrix fp8_ds_mla:4
}
case $step in
  ab) ab ;;
  check) check ;;
  wide) wide ;;
  lean) lean ;;
  probe) ncu_epilogue && lean ;;
  ncu) ncu_epilogue ;;
  epilogue) epilogue ;;
  timeline) timeline ;;
  all) ab && timeline ;;
  *) echo "unknown step '$step': use ab, timeline, all, epilogue, ncu,\
  lean, probe, wide or check" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s31_$step.tgz" "s31_$step" && rm -rf "$logs"
