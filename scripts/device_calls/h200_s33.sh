#!/usr/bin/env bash
# Device steps written in the thirty-third session (2026-12-05); meant for an H200 (an H100's DRAM,
# not the SMs' rate, bounds these launches: BENCHMARKS.md section 7, thirty-second session):
#   pair  three builds: old = the plain order (.devcarry/bin/tuner_old, `scripts/devcarry_old_tuner.sh
#         81ef82e old`); pair = schedule.h's division_cta (CTAs c and c + N / 2, expected on one
#         SM, take neighbouring ranges, so that no SM holds two CTAs of ceil(G / N) tiles;
#         `devcarry_old_tuner.sh dc4938e pair`); new = this tree (that, and every division of
#         the tile-dividing kernels and their combine by a host-made multiplier, schedule.h's
#         FastDivisor, in place of 64-bit and 32-bit divisions): schedule 2
#         (merges 1 and 4, both launch bounds) and, as the control whose kernels did not change,
#         schedule 0 (target_ctas 0, 128, 256), at 69 and 92-400, two rounds.
#   timeline  the diagnostic tuner (.devcarry/bin/tuner_timeline, `scripts/devcarry_variant_tuner.sh
#         timeline SMLA_TIMELINE=100`, this tree) at batch 92 (schedule 2) and 69 (schedule 0):
#         which CTAs the block scheduler puts on one SM (timeline.py's gap line) and each SM's end;
#         and at 66, where both schedules give each of 264 CTAs 8 tiles of one row, which part of
#         a launch schedule 2's kernel loses (~3-6 %: the thirty-second session).
#   all   every survivor of the sm_90 plan at 69, 72, 92 (BATCHES overrides): the thirty-second
#         session's owed question (scripts/device_calls/h200_s32.sh all).
# Usage: scripts/device_calls/h200_s33.sh pair|timeline|all   (carry .devcarry; logs in $OUT/s33_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s33.sh pair|timeline|all}
source scripts/device_call_env.sh
source scripts/bench_ab.sh
call_logs s33 "$step"  # $logs, $winners
pair() {
  # schedule 2 is planned at target_ctas 128 only; schedule 0 at all three
  local where="$winners,merge=1|4,schedule=0|2,target_ctas=0|128|256,ctas_per_sm=1|2"
  AB_BUILDS="old pair new" bench_ab "$logs" "${BATCHES:-69,92,96,136,160,192,400}" "$where" \
    schedule,merge
  AB_BUILDS="old pair new" bench_ab_summary "$logs" schedule merge
  echo "lines naming a wrong result: $(grep -ciE "wrong" "$logs"/*.log | paste -sd ' ')"
}
timeline() {
  source scripts/timeline_step.sh
  export XDG_CACHE_HOME=/tmp/s33_timeline_cache
  timeline_step "$logs" b92_s2 92 "$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=2"
  timeline_step "$logs" b69_s0 69 "$winners,merge=4,schedule=0,target_ctas=256,ctas_per_sm=1"
  # 66 rows of 32 tiles: both schedules give each of 264 CTAs 8 tiles of one row
  timeline_step "$logs" b66_s2 66 "$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=2"
  timeline_step "$logs" b66_s0 66 "$winners,merge=4,schedule=0,target_ctas=0,ctas_per_sm=1"
  grep -h "gap" "$logs"/*.txt
}
case $step in
  pair) pair ;;
  timeline) timeline ;;
  all) bash scripts/device_calls/h200_s32.sh all ;;
  *) echo "unknown step '$step': use pair, timeline or all" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s33_$step.tgz" "s33_$step" && rm -rf "$logs"
