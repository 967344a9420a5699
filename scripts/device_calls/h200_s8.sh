#!/usr/bin/env bash
# H200, owed from the seventh session (2026-12-02), one call (~9 min):
#   1. racecheck on scripts/racecheck_cluster_probe.cu, cluster and plain: does racecheck tell the
#      CTAs of a cluster apart? (the cluster merge's racecheck report, BENCHMARKS.md section 7)
#   2. gpu_sweep again (its kill -9 case now polls the trials table; s7's run raced the schema)
#   3. the fp8 correctness matrix at 32 and 64 local heads and bf16 at 64, with merge 2 on every
#      pipelined key (the 32-head fp8 part reached batch 64 before its limit in s7)
# Usage: scripts/device_calls/h200_s8.sh   (carry .devcarry; a short table is printed last; logs in $OUT)
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
logs=$out/s8
mkdir -p "$logs"
export TUNER_REQUIRE_GPU=1
began=$(date +%s)
left() { echo $((${BUDGET_S:-560} - $(date +%s) + began)); }
nvcc -arch=sm_90 -o /tmp/probe scripts/racecheck_cluster_probe.cu >"$logs/probe_build.log" 2>&1
for mode in cluster plain; do
  timeout 60 compute-sanitizer --tool racecheck /tmp/probe "$mode" >"$logs/probe_$mode.log" 2>&1
  echo "probe $mode rc=$? $(grep -E 'RACECHECK SUMMARY' "$logs/probe_$mode.log")"
done
timeout 240 build/tests/gpu_sweep >"$logs/gpu_sweep.log" 2>&1
echo "gpu_sweep rc=$? $(grep -E 'test cases' "$logs/gpu_sweep.log" | tail -n 1)"
for part in fp8_ds_mla:2 fp8_ds_mla:1 bf16:1; do
  l=$(left)
  [ "$l" -gt 40 ] || break
  limit=$((l / 2 > 40 ? l / 2 : l))
  TUNER_GPU_MATRIX=$part timeout "$limit" build/tests/gpu_sparse_mla_decode -tc="every config*" \
    >"$logs/matrix_${part//:/_}.log" 2>&1
  echo "matrix $part rc=$? (limit $limit s) $(grep -cE '^(fp8_ds_mla|bf16) ' "$logs/matrix_${part//:/_}.log") rows; $(grep -E 'checks run|test cases' "$logs/matrix_${part//:/_}.log" | tail -n 2 | tr '\n' ' ')"
done
tar -C "$out" -czf "$out/s8.tgz" s8 && rm -rf "$logs"
