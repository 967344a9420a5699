#!/usr/bin/env bash
# H200 steps written in the twenty-ninth session (2026-12-05):
#   sweep     The cold default sweep (`h200_issue12_s4.sh build main`: fresh cubin cache, fresh
#             DB, then the warm rerun) on this tree, whose plan records a value the shape rules out
#             alone once (393,662 plan rows for the 1,180,980 members, from one row each).
#   ab_plan   `tuner plan --arch sm_90 --db` into a fresh DB on a warm cubin cache (the plan and
#             its record, no compile), the carried old build's binary (.devcarry/old/tuner, the
#             twenty-eighth session's cd24001) against this tree's, alternately, two rounds: the
#             record's cost on one machine.
#   all       sweep, then ab_plan.
# Usage: scripts/device_calls/h200_s29.sh sweep|ab_plan|all   (carry .devcarry; logs in $OUT/s29_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s29.sh sweep|ab_plan|all}
source scripts/device_call_env.sh
logs=$out/s29_$step
mkdir -p "$logs"
sweep() {
  WORK=/tmp/s29_sweep bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
  cp /tmp/s29_sweep/cold.log /tmp/s29_sweep/warm.log "$logs/" 2>/dev/null
  cut -c1-220 "$logs/main.txt" | tail -n 9
}
ab_plan() {
  local cache=/tmp/s29_plan_cache
  mkdir -p "$cache"
  build/tuner/tuner plan --arch sm_90 --cache-dir "$cache" >/dev/null 2>&1  # warm the cache
  for round in 1 2; do
    for side in old new; do
      local bin=build/tuner/tuner
      [ "$side" = old ] && bin=.devcarry/old/tuner
      rm -f /tmp/s29_ab.db*
      local began_ns
      began_ns=$(date +%s%N)
      "$bin" plan --arch sm_90 --cache-dir "$cache" --db /tmp/s29_ab.db >/dev/null \
        2>"$logs/ab_${side}_$round.err"
      echo "round $round $side rc=$? $((($(date +%s%N) - began_ns) / 1000000)) ms," \
        "$(du -m /tmp/s29_ab.db | cut -f1) MB; $(grep -h '^recorded' "$logs/ab_${side}_$round.err")"
    done
  done
}
case $step in
  sweep) sweep ;;
  ab_plan) ab_plan ;;
  all) sweep; ab_plan ;;
  *) echo "unknown step '$step': use sweep, ab_plan or all" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s29_$step.tgz" "s29_$step" && rm -rf "$logs"
