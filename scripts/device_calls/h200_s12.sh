#!/usr/bin/env bash
# H200, twelfth session (2026-12-03), one call (~9 min), owed from the eleventh:
#   0. first the kernel changed since the last GPU run (prepare_q_fp8's batched loads): the corner
#      cases and the fp8 32-head matrix;
#   1. the spread probe (scripts/device_calls/h200_spread_probe.sh): fresh processes at 256 and 512, 1 and 4 GiB
#      of KV, with nvidia-smi's clocks and throttle reasons beside them;
#   2. one launch shape (256 CTAs) at batch 16-256: a tile's steady-state cost and the fixed cost;
#      the GPU tests of the sweep (gpu_sweep: the --also-time twin case has never run);
#   3. the correctness matrix on the final kernel (batched q loads, producers first): fp8 at 32
#      local heads, bf16 at 64, fp8 at 64, then the corner cases, each with the time left.
# Usage: BUDGET_S=560 scripts/device_calls/h200_s12.sh   (carry .devcarry; a short table is printed last)
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
export TUNER_REQUIRE_GPU=1
out=${OUT:-/tmp/tuner-out}
logs=$out/s12
mkdir -p "$logs"
began=$(date +%s)
left() { echo $((${BUDGET_S:-560} - $(date +%s) + began)); }

matrix() {  # matrix PART LIMIT_S: one (format:TP) part of gpu_sparse_mla_decode's matrix
  local name=${1//:/_}
  [ "$2" -gt 20 ] || { echo "matrix $1 not run: $2 s left"; return; }
  TUNER_GPU_MATRIX=$1 timeout "$2" build/tests/gpu_sparse_mla_decode -tc="every config*" \
    >"$logs/matrix_$name.log" 2>&1
  echo "matrix $1 rc=$? (limit $2 s) $(grep -cE '^(fp8_ds_mla|bf16) ' "$logs/matrix_$name.log")" \
    "rows; $(grep -E 'checks run|FAIL' "$logs/matrix_$name.log" | tail -n 2 | tr '\n' ' ')"
}

TUNER_GPU_MATRIX=fp8_ds_mla:4 timeout 60 build/tests/gpu_sparse_mla_decode \
  -tce="every config*" >"$logs/corners.log" 2>&1
echo "other cases rc=$? $(grep -E 'test cases' "$logs/corners.log" | tail -n 1)"
matrix fp8_ds_mla:2 150
ROUNDS=${ROUNDS:-3} OUT=$logs timeout 150 bash scripts/device_calls/h200_spread_probe.sh >"$logs/spread.txt" 2>&1
echo "spread probe rc=$? at $(($(date +%s) - began)) s"
# One launch shape at every batch: 256 CTAs of BLOCK_T 64 (2 per SM), so a CTA runs 2, 4, ..., 32
# tiles at batch 16, 32, ..., 256; the slope is the cost of a tile in steady state, the intercept
# the launch's fixed cost (the start, the last tile, the merge), for merge 1 and 2; and 128 CTAs
# (1 per SM, 4 ... 64 tiles): if a tile costs a lone CTA nearly what it costs two CTAs sharing an
# SM, the consumers' latency, not memory, sets the pace.
where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
timeout 60 build/tuner/tuner bench --batches 16,32,64,128,256 --no-default --best-per merge,target_ctas \
  --where "$where,producers=2,merge=1|2,target_ctas=128|256,schedule=0" >"$logs/tiles.log" 2>&1
echo "tiles per CTA rc=$?"
timeout 150 build/tests/gpu_sweep -tc="--also-time*,--batches waves*" >"$logs/gpu_sweep.log" 2>&1
echo "gpu_sweep rc=$? $(grep -E 'test cases' "$logs/gpu_sweep.log" | tail -n 1)"
l=$(left); matrix bf16:1 $((l / 2 - 5))
l=$(left); matrix fp8_ds_mla:1 $((l - 20))
tar -C "$out" -czf "$out/s12.tgz" s12
cat "$logs/spread.txt"
grep -E "best of merge" "$logs/tiles.log" | awk '{print "tiles:", $1, $10, $11, $13}'
rm -rf "$logs"
