#!/usr/bin/env bash
# Device steps written in the thirty-second session (2026-12-05); any sm_90 card (H200 or H100):
#   pad   the balanced division with row padding (schedule.h's SMLA_ROW_PAD: a CTA whose range
#         crosses into a row gets PAD fewer real tiles; .devcarry/bin/tuner_pad1 and tuner_pad2,
#         built with the header's default set to 1 and 2) against this tree's tuner (PAD 0):
#         schedule 2 under both launch bounds (merges 1 and 4), and schedule 0's best for
#         reference (this tree's build only: the padding does not touch it), at the batches where
#         schedule 2 won or came within 4 % (66-72, 92-104, 136-192, 272-400); two rounds on one
#         machine. `tuner bench` verifies every config against the reference first. Measured on
#         c850348 (run 1, H100: 0.2-7 % slower at every batch) and taken out again: building the
#         variants needs that commit's schedule.h (`git show c850348`).
#   all   every survivor of the sm_90 plan (`tuner bench --all`) at the batches the reference sweep
#         left under 60 % of copy (69, 72, 92; BATCHES overrides), the 8 fastest per batch and the
#         fastest per schedule x merge x BLOCK_T: does the sweep's batch search pass over a faster
#         config there? (The sweep screened 24 configs at 69-72 and 92.)
#   regids  schedule 2's fp8 kernels with the token ids loaded into registers a tile ahead, as
#         schedule 0 loads them (SMLA_EXP_REG_IDS; .devcarry/bin/tuner_regids from
#         `scripts/devcarry_variant_tuner.sh regids SMLA_EXP_REG_IDS`), against this tree's (ids
#         staged by cp.async, producer_ids.cuh): schedule 2 under both launch bounds, merges 1 and 4,
#         at 66-400, two rounds (the twenty-sixth session timed the staging 1-3 % slower at 64-72
#         and 2-4 % faster at 264-432 on an H200, before f00eb06 moved its read before the wait).
#         Measured on 4bfc929's switch (run 4, H100: registers 0.4-2.4 % slower at every batch) and
#         taken out again (`git show 4bfc929` to rebuild the variant).
# Usage: scripts/device_calls/h200_s32.sh pad|all|regids   (carry .devcarry; logs in $OUT/s32_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s32.sh pad|all|regids}
source scripts/device_call_env.sh
source scripts/bench_ab.sh
logs=$out/s32_$step
mkdir -p "$logs"
common="block_h=16,kv_unpack=0,mma_path=1,producers=2,num_warps=4,block_t=64,num_stages=2"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
pad() {
  local s2="$common,merge=1|4,schedule=2,target_ctas=128,ctas_per_sm=1|2"
  local both="$common,merge=1|4,schedule=0|2,target_ctas=0|128|256|1024,ctas_per_sm=1|2"
  local group batches
  for group in low high; do
    batches=${LOW:-66,69,72,92,96,104}
    [ $group = low ] || batches=${HIGH:-136,160,192,272,336,400}
    mkdir -p "$logs/$group"
    AB_BUILDS="new pad1 pad2" bench_ab "$logs/$group" "$batches" "$both" schedule,ctas_per_sm "$s2"
    AB_BUILDS="new pad1 pad2" bench_ab_summary "$logs/$group" schedule ctas_per_sm merge
  done
  grep -hE "wrong|mismatch|FAIL" "$logs"/*/*.log | head -5
}
all_survivors() {
  XDG_CACHE_HOME=/tmp/s32_all_cache timeout "${ALL_LIMIT_S:-400}" build/tuner/tuner bench --all \
    --no-default --batches "${BATCHES:-69,72,92}" --top 8 --best-per schedule,merge,block_t \
    >"$logs/all.log" 2>&1
  echo "bench --all rc=$? at $(($(date +%s) - began)) s"
  head -n 2 "$logs/all.log" | cut -c1-160
  grep -E "^ +[0-9]+ block_t" "$logs/all.log" | sed -E 's/ +/ /g; s/(block_h|kv_unpack|producers|num_warps|mma_path)=[0-9]+ //g' |
    awk '{ tag = ""; for (i = 17; i <= NF; i++) tag = tag " " $i; print $1, $2, $3, $4, $5, $6, $7, $8, $9, $15, tag }'
  echo "lines naming a wrong result: $(grep -ciE "wrong" "$logs/all.log")"
}
regids() {
  AB_BUILDS="new regids" bench_ab "$logs" "${BATCHES:-66,72,92,96,136,160,192,272,336,400}" \
    "$common,merge=1|4,schedule=2,target_ctas=128,ctas_per_sm=1|2" ctas_per_sm
  AB_BUILDS="new regids" bench_ab_summary "$logs" ctas_per_sm merge
  echo "lines naming a wrong result: $(grep -ciE "wrong" "$logs"/*.log | paste -sd ' ')"
}
case $step in
  pad) pad ;;
  regids) regids ;;
  all) all_survivors ;;
  *) echo "unknown step '$step': use pad, all or regids" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s32_$step.tgz" "s32_$step" && rm -rf "$logs"
