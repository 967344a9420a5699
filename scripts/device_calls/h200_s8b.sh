#!/usr/bin/env bash
# H200, eighth session (2026-12-02): the balanced schedule (schedule 1, templates/sparse_mla_decode/
# schedule.h) in the default sweep. One call (~9 min) on a fresh machine:
#   1. gpu_cuda_driver (the resident-CTA count the balanced grid uses: cluster size 1)
#   2. the default fp8 sweep cold and warm (h200_issue12_s4.sh main: 51 sizes + wave edges; its
#      verification checks every survivor, the balanced kernels included), a bf16 sweep at 7
#      batches into the same DB, and `tuner report` of it (per-batch winners, % of copy bandwidth,
#      what the schedule dimension bought)
#   3. racecheck on the batch-64 winners' kernel with merge 1 (no cluster; 8 tiles per CTA, so the
#      ring is refilled): does the s7 report follow the ring handoff rather than the cluster?
#   4. the fp8 16-head correctness matrix with the time left (balanced kernels are plan survivors)
# Usage: scripts/device_calls/h200_s8b.sh   (carry .devcarry; a short table is printed last; logs in $OUT)
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
export WORK=/tmp/s8b
logs=$out/s8b
mkdir -p "$logs" "$WORK"
export TUNER_REQUIRE_GPU=1
began=$(date +%s)
left() { echo $((${BUDGET_S:-540} - $(date +%s) + began)); }
tuner=build/tuner/tuner
where_b64="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
where_b64="$where_b64,producers=2,target_ctas=256,schedule=0"

timeout 60 build/tests/gpu_cuda_driver >"$logs/gpu_cuda_driver.log" 2>&1
echo "gpu_cuda_driver rc=$? $(grep -E 'test cases' "$logs/gpu_cuda_driver.log" | tail -n 1)"
bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
cp "$WORK"/cold.log "$WORK"/warm.log "$logs/" 2>/dev/null
timeout 150 $tuner sweep --db "$WORK/tuned.db" --cache-dir "$WORK/cache" --kv bf16 \
  --batches 1,8,32,64,128,256,512 >"$logs/sweep_bf16.log" 2>&1
echo "bf16 sweep rc=$?"; grep -E "^time:|^run " "$logs/sweep_bf16.log" | cut -c1-200
$tuner report --db "$WORK/tuned.db" --out "$logs/report" >"$logs/report.log" 2>&1
echo "report rc=$?"
XDG_CACHE_HOME=$WORK/race_cache timeout 60 compute-sanitizer --tool racecheck $tuner bench \
  --kv fp8_ds_mla --batches 64 --where "$where_b64,merge=1" --no-default --launches 1 \
  --l2 flush >"$logs/racecheck_m1_b64.log" 2>&1
echo "racecheck merge 1 b64 rc=$? $(grep -E 'RACECHECK SUMMARY' "$logs/racecheck_m1_b64.log")"
grep -oE '\+0x[0-9a-f]+' "$logs/racecheck_m1_b64.log" | sort | uniq -c | sort -rn | head -n 4
l=$(left)
if [ "$l" -gt 40 ]; then
  TUNER_GPU_MATRIX=fp8_ds_mla:1 timeout "$l" build/tests/gpu_sparse_mla_decode -tc="every config*" \
    >"$logs/matrix_fp8_16.log" 2>&1
  echo "matrix fp8 16 heads rc=$? (limit $l s) $(grep -cE '^fp8_ds_mla ' "$logs/matrix_fp8_16.log") rows, failed column: $(awk '/^fp8_ds_mla/ {f += $6} END {print f + 0}' "$logs/matrix_fp8_16.log")"
fi
cut -c1-220 "$logs/main.txt" | tail -n 9
awk '/pruned for sm_90/ {on = 1} on && /^\| [0-9]+ \| `/' "$logs/report/report.md" |
  awk -F'|' '{print $2, $3, $4, $10}' | head -n 60
tar -C "$out" -czf "$out/s8b.tgz" s8b && rm -rf "$logs"
