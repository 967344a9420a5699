#!/usr/bin/env bash
# Device call of the thirty-fifth session (2026-12-06); any sm_90 card (H200 or H100):
#   claim  the claimed-tiles experiment (templates/sparse_mla_decode/claimed_producer.cuh, compiled
#          in where SMLA_EXP_CLAIM is defined: .devcarry/bin/tuner_claim from
#          `scripts/devcarry_variant_tuner.sh claim SMLA_EXP_CLAIM`) against this tree's tuner:
#          per-row splits (schedule 0) under merge 3, whose ticket word also counts the claims,
#          and merge 4 (the winners' merge; no claims in either build) as the control, at the
#          batches under 60 % of copy and around them, two rounds (`--trimmed`: merge 3 is a
#          measured trim). First a correctness pass of the claiming kernels at topk 5 and 600
#          (`tuner bench` verifies every config against the reference before timing it).
#          Measured on 6015463 (call 2, H100: 1-2.6 % faster under merge 3 at 69-92, merge 3 itself
#          1.3x merge 4's time; docs/device-logs/s35) and taken out again: building the variant
#          needs that commit's templates (`git worktree add /tmp/claim 6015463`, then the
#          variant script there).
#   mixed  the mixed-splits experiment (deploy.cpp's mixed_splits_experiment under the environment
#          SMLA_EXP_MIXED, pipelined_work.cuh's splits_range under the macro SMLA_EXP_MIXED:
#          .devcarry/bin/tuner_mixed, a wrapper that sets the variable for
#          .devcarry/bin/tuner_mixed.bin from `devcarry_variant_tuner.sh mixed.bin SMLA_EXP_MIXED`):
#          per-row splits over exactly one wave, rows in k + 1 or k parts, against this tree's
#          tuner (the same host code without the variable), schedule 0 under merges 1 and 4, at
#          64-256, two rounds; `tuner bench` verifies every config first. Measured on 90018f8
#          (call 4, H100: 1.3-1.45x slower wherever rows split unevenly; 927c0fe's mixedtl, call 5,
#          shows why: docs/device-logs/s35) and taken out again: `git worktree add /tmp/mixed
#          927c0fe` to rebuild the variants.
#   mixedtl  the per-CTA timelines (SMLA_TIMELINE=100) of this tree's kernel and the mixed
#          splits' at 69 and 136 (.devcarry/bin/tuner_timeline and tuner_mixedtl, a wrapper as
#          above around tuner_mixedtl.bin): where the mixed splits' time goes.
#   s2tl   the per-CTA timelines (tuner_timeline) of schedule 2 at 69 and 72, where its balanced
#          division (8-9 tiles a CTA) loses to schedule 0's 11, and of schedule 0 at 66 (264 CTAs
#          of 8 tiles, the division's ideal): what schedule 2's crossing rows cost.
#   ramp   schedule 2's ramp (its first tile lands ~1.5 us later than schedule 0's, call 6): the
#          timelines, with the last producer thread's first copies (timeline.cuh's
#          kIssued0All), of schedule 2 at 69 and schedule 0 at 66 under both launch bounds
#          (schedule 0's bound of 2 is no survivor of the plan: that step stops with exit 2).
#   owed   what the thirty-second to thirty-fourth sessions left open, by card: on an H200 the
#          default fp8 sweep and its report (h200_s34.sh's first step); on an H100, with OWED_ALL
#          set, the batch search's question at 69, 72, 92 (h200_s32.sh all: every survivor of the
#          sm_90 plan, the fastest per schedule x merge x BLOCK_T), else nothing.
# Usage: scripts/device_calls/h200_s35.sh claim|mixed|mixedtl|s2tl|ramp|owed
#   (carry .devcarry; logs in $OUT/s35_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s35.sh claim|mixed|mixedtl|s2tl|ramp|owed}
source scripts/device_call_env.sh
source scripts/bench_ab.sh
call_logs s35 "$step"  # $logs, $winners
claim() {
  local where="$winners,merge=3|4,schedule=0,target_ctas=0|128|256,ctas_per_sm=1|2" topk
  for topk in 5 600; do
    XDG_CACHE_HOME=/tmp/bench_ab_cache_claim timeout 120 .devcarry/bin/tuner_claim bench \
      --topk $topk --batches 1,7,64,128 --where "$where,merge=3" --no-default --trimmed \
      >"$logs/check_topk$topk.log" 2>&1
    echo "claim check topk $topk rc=$? wrong: $(grep -ciE "wrong" "$logs/check_topk$topk.log")"
  done
  AB_BUILDS="new claim" AB_EXTRA=--trimmed bench_ab "$logs" \
    "${BATCHES:-64,69,72,79,92,128,256,464}" "$where" merge,target_ctas
  AB_BUILDS="new claim" bench_ab_summary "$logs" merge target_ctas
  echo "lines naming a wrong result: $(grep -ciE "wrong" "$logs"/*.log | paste -sd ' ')"
}
mixed() {
  local where="$winners,merge=1|4,schedule=0,target_ctas=0|256,ctas_per_sm=1|2" topk
  for topk in 600; do
    XDG_CACHE_HOME=/tmp/bench_ab_cache_mixed timeout 200 .devcarry/bin/tuner_mixed bench \
      --topk $topk --batches 7,69,136 --where "$where" --no-default \
      >"$logs/check_topk$topk.log" 2>&1
    echo "mixed check topk $topk rc=$? wrong: $(grep -ciE "wrong" "$logs/check_topk$topk.log")"
  done
  AB_BUILDS="new mixed" AB_LIMIT_S=240 bench_ab "$logs" \
    "${BATCHES:-64,66,69,72,79,92,96,104,128,136,200,256}" "$where" merge,target_ctas
  AB_BUILDS="new mixed" bench_ab_summary "$logs" merge target_ctas
  echo "lines naming a wrong result: $(grep -ciE "wrong" "$logs"/*.log | paste -sd ' ')"
}
mixedtl() {
  source scripts/timeline_step.sh
  local one="$winners,merge=4,schedule=0,ctas_per_sm=1" batch
  for batch in 69 136; do
    XDG_CACHE_HOME=/tmp/s35_tl_new timeline_step "$logs" "b${batch}_new" $batch \
      "$one,target_ctas=0"
    XDG_CACHE_HOME=/tmp/s35_tl_mixed TIMELINE_TUNER=tuner_mixedtl timeline_step "$logs" \
      "b${batch}_mixed" $batch "$one,target_ctas=0"
  done
}
s2tl() {
  source scripts/timeline_step.sh
  export XDG_CACHE_HOME=/tmp/s35_tl_new
  local s2="$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=2"
  timeline_step "$logs" b69_s2 69 "$s2"
  timeline_step "$logs" b72_s2 72 "$s2"
  timeline_step "$logs" b66_s0 66 "$winners,merge=4,schedule=0,target_ctas=0,ctas_per_sm=1"
}
ramp() {
  source scripts/timeline_step.sh
  export XDG_CACHE_HOME=/tmp/s35_tl_new
  local cps
  for cps in 1 2; do
    timeline_step "$logs" "b69_s2_cps$cps" 69 \
      "$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=$cps"
    timeline_step "$logs" "b66_s0_cps$cps" 66 \
      "$winners,merge=4,schedule=0,target_ctas=0,ctas_per_sm=$cps"
  done
  grep -h "last producer" "$logs"/*.txt
}
owed() {
  local card
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
  if [[ $card == *H200* ]]; then
    default_sweep_report "$logs" s35
  elif [ -n "${OWED_ALL:-}" ]; then
    ALL_LIMIT_S=${ALL_LIMIT_S:-420} BATCHES=${BATCHES:-69,72,92} bash scripts/device_calls/h200_s32.sh all
  else  # answered twice on H100s (calls 3 and 7, docs/device-logs/s35): OWED_ALL=1 to ask again
    echo "no H200 ($card): nothing owed runs here"
  fi
}
"$step"
tar -C "$out" -czf "$out/s35_$step.tgz" "s35_$step" && rm -rf "$logs"
