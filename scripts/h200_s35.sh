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
# Usage: scripts/h200_s35.sh claim   (carry .devcarry; logs in $OUT/s35_claim.tgz)
step=${1:?usage: scripts/h200_s35.sh claim}
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
"$step"
tar -C "$out" -czf "$out/s35_$step.tgz" "s35_$step" && rm -rf "$logs"
