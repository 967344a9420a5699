#!/usr/bin/env bash
# H200 steps written in the twenty-eighth session (2026-12-05):
#   sweep_repeat  sweep, then repeat, in one call.
#   sweep         1. The cold default sweep (`h200_issue12_s4.sh build main`: fresh cubin cache,
#                    fresh DB, then the warm rerun) on this tree, whose plan records its 1.18 M
#                    rows ~15 % faster (compile keys only where a compile ran; canonical params
#                    checked, not rebuilt). The twenty-eighth session's first sweep, before that
#                    change, took 155.2 s cold (plan 53.1 s) against the 150-s bound.
#   plan_phase    The cold plan phase alone, when the budget left no room for the default
#                 sweep: `tuner sweep --batches 64` into a fresh DB with a fresh cubin cache (the
#                 plan, its compiles and its record, as in the default sweep), then the same
#                 command again (the plan found held: nothing recorded); their time lines.
#   repeat        2. The 64-head repeat test owed since the twenty-second session
#                    (gpu_sparse_mla_repeat, fp8 at 64 local heads, batch 64, topk 2048, every
#                    launch variant of every compile key, 3 repeats), with the part's cubins
#                    compiled on the CPU machine (scripts/devcarry_matrix_cubins.sh fp8_ds_mla:1)
#                    and carried; it runs in what is left of the call, and says how far it got.
# Usage: scripts/device_calls/h200_s28.sh sweep|plan_phase|repeat|sweep_repeat   (carry .devcarry with matrix_cubins.tar.xz; logs in
# $OUT/s28_sweep_repeat.tgz)
step=${1:?usage: scripts/device_calls/h200_s28.sh sweep|plan_phase|repeat|sweep_repeat}
source scripts/device_call_env.sh
logs=$out/s28_$step
mkdir -p "$logs"
sweep() {
    WORK=/tmp/s28_sweep bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
    cp /tmp/s28_sweep/cold.log /tmp/s28_sweep/warm.log "$logs/" 2>/dev/null
    cut -c1-220 "$logs/main.txt" | tail -n 9
}
plan_phase() {
    rm -rf /tmp/s28_plan && mkdir -p /tmp/s28_plan
    for pass in cold warm; do
      timeout 200 build/tuner/tuner sweep --db /tmp/s28_plan/tuned.db --cache-dir \
        /tmp/s28_plan/cache --batches 64 >"$logs/plan_$pass.log" 2>&1
      echo "$pass rc=$? $(grep -hE '^time:' "$logs/plan_$pass.log" | cut -c1-200)"
    done
}
repeat() {
    mkdir -p /tmp/s28_cubins && tar -C /tmp/s28_cubins -xJf .devcarry/matrix_cubins.tar.xz
    left=$((${BUDGET_S:-570} - $(date +%s) + began))
    TUNER_GPU_CUBIN_CACHE=/tmp/s28_cubins/cubins TUNER_GPU_MATRIX=fp8_ds_mla:1 \
      TUNER_GPU_REPEATS=3 TUNER_GPU_LOG=$logs/moved.log \
      run_gpu_test "$logs/repeat_fp8_1.log" "$((left - 10))" gpu_sparse_mla_repeat
    grep -E "^(kv|fp8_ds_mla) " "$logs/repeat_fp8_1.log"
    head -n 10 "$logs/moved.log" 2>/dev/null | cut -c1-250
}
case $step in
  sweep) sweep ;;
  plan_phase) plan_phase ;;
  repeat) repeat ;;
  sweep_repeat) sweep; repeat ;;
  *) echo "unknown step '$step': use sweep, plan_phase, repeat or sweep_repeat" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s28_$step.tgz" "s28_$step" && rm -rf "$logs"
