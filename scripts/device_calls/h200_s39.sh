#!/usr/bin/env bash
# Device call of the thirty-ninth session (2026-12-06), one script for whatever card comes:
#   on an H200: the full reference sweep of this tree and its report (`h200_s36.sh`'s default;
#     SWEEP=0: the STEP below instead).
#   on any other card, STEP:
#   NAME (default cpa)  an experiment's build, .devcarry/bin/tuner_NAME (from
#                  `scripts/devcarry_variant_tuner.sh NAME MACRO`), against this tree's kernels:
#                  best of schedule 0 and of schedule 2 on the fp8 winners' structure at BATCHES,
#                  two rounds, every config checked against the reference first; then, where
#                  .devcarry/bin/tuner_NAMEtl is carried (the same with SMLA_TIMELINE=100), its
#                  timelines of schedules 2 and 0 at 69 beside this tree's (tuner_timeline), with
#                  the fifth tile's copy-issue marks (kMid*). Experiments (measured, taken out
#                  again; pipelined_producer.cuh at 5b36b90, docs/device-logs/s39/):
#                  cpa  SMLA_EXP_CPASYNC_GATHER: a tile's rows by 16-byte cp.async, a warp's rows'
#                       chunks in order, instead of one bulk copy a row (call 7)
#                  l0   SMLA_EXP_LANE0_ISSUE: lane 0 of each producer warp issues the warp's bulk
#                       copies in straight-line code (the ids by shuffles) instead of the elect
#                       loop over the lanes (call 9)
#                  p4   four producer warps instead of two, each issuing 16 of a tile's 64 copies
#                       (producer_rows.h): a tuner whose host runs configs of producers 2 with 4
#                       (`HOST_PATCH=docs/device-logs/s39/producers4_host.patch
#                       scripts/devcarry_variant_tuner.sh p4`, and `... p4tl SMLA_TIMELINE=100`);
#                       128 registers under a bound of two CTAs an SM, which the trims leave out
#                       for schedule 0 (so `--trimmed`), and timed there
# Usage: scripts/device_calls/h200_s39.sh [NAME|waits|matrix]   (carry .devcarry; logs in $OUT/s39_STEP.tgz)
set -u
card=$(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | head -n 1)
if [[ $card == *H200* ]] && [ "${SWEEP:-1}" = 1 ]; then  # SWEEP=0: the STEP on an H200 too
  exec bash scripts/device_calls/h200_s36.sh
fi
step=${1:-cpa}
if [ "$step" = waits ] || [ "$step" = matrix ]; then
  exec bash scripts/device_calls/h200_s38.sh "$step"
fi
source scripts/device_call_env.sh
call_logs s39 "$step"
export TUNER_BINARY=$PWD/build/tuner/tuner
source scripts/bench_ab.sh
extra="" limit=100
# --trimmed times 12 candidates a batch, compiled cold in round 1 (call 12: past 60 s)
[ "$step" = p4 ] && extra=--trimmed limit=170
AB_BUILDS="new $step" AB_LIMIT_S=${AB_LIMIT_S:-$limit} BATCHES=${BATCHES:-64,69,72,92,136,256,448} \
  AB_EXTRA=$extra bench_ab_schedules "$logs"
source scripts/timeline_step.sh
for build in timeline "${step}tl"; do
  [ -x ".devcarry/bin/tuner_$build" ] || continue
  TIMELINE_TUNER=tuner_$build XDG_CACHE_HOME=/tmp/s39_$build timeline_step "$logs" \
    "b69_s2_$build" 69 "$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=2" |
    grep -E "==|stream|crossing|  x |fifth"
  grep -A2 "fifth" "$logs/b69_s2_$build.txt" | head -n 3
  [ "$step" = cpa ] && continue  # call 7 ran schedule 2 only
  cps=1
  [ "$step" = p4 ] && [ "$build" != timeline ] && cps=2
  TIMELINE_EXTRA=$extra TIMELINE_TUNER=tuner_$build XDG_CACHE_HOME=/tmp/s39_$build timeline_step \
    "$logs" "b69_s0_$build" 69 "$winners,merge=4,schedule=0,target_ctas=256,ctas_per_sm=$cps" |
    grep -E "==|stream|fifth"
  grep -A2 "fifth" "$logs/b69_s0_$build.txt" | head -n 3
done
tar -C "$out" -czf "$out/s39_$step.tgz" "s39_$step" && rm -rf "$logs"
