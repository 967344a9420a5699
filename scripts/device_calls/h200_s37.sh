#!/usr/bin/env bash
# Device call of the thirty-seventh session (2026-12-06), on whatever card comes (the H100 showed
# schedule 2's per-tile excess as the H200 did: BENCHMARKS.md section 7, thirty-seventh session).
#   crossing  per-CTA timelines with the first row crossing's marks (timeline.cuh's kCross*) of
#             schedule 2 at 92 and 136: .devcarry/bin/tuner_timeline (`scripts/devcarry_variant_
#             tuner.sh timeline SMLA_TIMELINE=100`) and, where carried, tuner_tlqre (the same with
#             SMLA_EXP_Q_REST_EARLY), then the A/B below.
#   qre       the experiment SMLA_EXP_Q_REST_EARLY (q_handoff.cuh: the q rest's loads before the
#             producers' q_free wait; .devcarry/bin/tuner_qre) against this tree's tuner, best of
#             schedule 0 and of schedule 2 at the batches schedule 2 wins or nearly wins, two
#             rounds; `tuner bench` verifies every config first.
# The experiments' switches (SMLA_EXP_Q_REST_EARLY, _HANDOFF_LATE, _Q_AHEAD) left the templates
# with 4cc2ee1, which made the 9 units ahead the kernels' behaviour: `qre` and `late` need a
# checkout of 6ea1a23 for their variant builds; `crossing`'s timelines run on any later tree.
# Usage: scripts/device_calls/h200_s37.sh [crossing|qre|late]   (carry .devcarry; logs in $OUT/s37_STEP.tgz)
set -u
step=${1:-crossing}
source scripts/device_call_env.sh
call_logs s37 "$step"

qre() {
  source scripts/bench_ab.sh
  AB_BUILDS="new qre" AB_LIMIT_S=150 bench_ab_schedules "$logs"
}
crossing() {
  source scripts/timeline_step.sh
  local s2="$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=2" batch build
  for build in timeline tlqre; do
    [ -x ".devcarry/bin/tuner_$build" ] || continue
    for batch in 92 136; do
      XDG_CACHE_HOME=/tmp/s37_$build TIMELINE_TUNER=tuner_$build \
        timeline_step "$logs" "b${batch}_s2_$build" "$batch" "$s2" | grep -E "==|stream|crossing|  x "
    done
  done
}
# late: the handoff after the new row's second tile's copies (SMLA_EXP_HANDOFF_LATE), with 4 or
# all 9 of a producer thread's q units loaded at the row's first tile (SMLA_EXP_Q_AHEAD=9), and
# the 9 ahead without the late handoff: timelines of schedule 2 at 92 and 136 (tuner_tllate,
# tuner_tllate9), then each build against this tree's tuner (schedule 0 runs no handoff: the
# control).
late() {
  source scripts/timeline_step.sh
  local s2="$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=2" batch
  for batch in 92 136; do
    XDG_CACHE_HOME=/tmp/s37_tllate9 TIMELINE_TUNER=tuner_tllate9 \
      timeline_step "$logs" "b${batch}_s2_tllate9" "$batch" "$s2" | grep -E "==|stream|crossing|  x "
  done
  source scripts/bench_ab.sh
  AB_BUILDS="new late late9 ahead9" AB_LIMIT_S=120 bench_ab_schedules "$logs"
}
case "$step" in
  crossing) crossing && qre ;;
  qre) qre ;;
  late) late ;;
  *)
    echo "unknown step '$step': use crossing, qre or late" >&2
    exit 2
    ;;
esac
tar -C "$out" -czf "$out/s37_$step.tgz" "s37_$step" && rm -rf "$logs"
