#!/usr/bin/env bash
# H200, the runs the fifth session (2026-12-01, no device time left) prepared and could not make.
# One PART per device call (each fits the 10-minute limit); run `scripts/devcarry_refresh.sh`
# here first and carry .devcarry.
#   issue12   the default sweep, now 'cudagraph,waves' (132, 264, 396 tuned too), cold and warm,
#             then the search and bucket oracles (scripts/device_calls/h200_issue12_s4.sh all): the bucket
#             regret at 130 and 260 was 20 % and 33 % without the wave edges (target <= 3 %).
#   bf16      issue 9's matrix on the kept tree: bf16 KV at 16, 32 and 64 local heads (one
#             failure of 6,048 was seen with the reverted early gather; is the kept tree clean?)
#   fp8       the same for fp8 KV at 32 and 64 local heads (16 passed: 21,840 checks in s4)
#   race      compute-sanitizer racecheck and synccheck on the config of that failure (bf16, batch
#             64, topk 600, BLOCK_T 16, 8 + 2 warps, CTAS_PER_SM 3, TARGET_CTAS 1024, pdl 1),
#             then gpu_sweep (the new 'waves' case included), the launcher tests and the driver
#             tests (core/cuda_driver.cpp was split into core/cuda_*.cpp: scripts/device_calls/h200_split.sh
#             is the longer form of this check)
# Usage: scripts/device_calls/h200_s5.sh issue12|bf16|fp8|race
set -u
part=${1:?usage: scripts/device_calls/h200_s5.sh issue12|bf16|fp8|race}
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
logs=$out/s5_$part
mkdir -p "$logs"
export TUNER_REQUIRE_GPU=1

matrix() {  # matrix PARTS LIMIT_S: the GPU matrix restricted to PARTS (format:TP,...)
  TUNER_GPU_MATRIX=$1 timeout "$2" build/tests/gpu_sparse_mla_decode -tc="every config*" \
    >"$logs/matrix_${1//[:,]/_}.log" 2>&1
  echo "matrix $1 rc=$? $(grep -E 'checks run|failed|test cases' "$logs/matrix_${1//[:,]/_}.log" |
    tail -n 3 | tr '\n' ' ')"
}

case "$part" in
  issue12)
    bash scripts/device_calls/h200_issue12_s4.sh build all >"$logs/issue12.txt" 2>&1
    tail -n 16 "$logs/issue12.txt"
    ;;
  bf16)
    matrix bf16:4 200
    matrix bf16:2 180
    matrix bf16:1 180
    ;;
  fp8)
    matrix fp8_ds_mla:2 260
    matrix fp8_ds_mla:1 260
    ;;
  race)
    # The failing config itself (8 warps, CTAS_PER_SM 3) is a measured trim: --trimmed plans it.
    where='block_t=16,num_warps=8,producers=2,ctas_per_sm=3,target_ctas=1024,merge=1'
    for tool in racecheck synccheck; do
      timeout 200 compute-sanitizer --tool "$tool" --error-exitcode 9 build/tuner/tuner bench \
        --kv bf16 --topk 600 --batches 64 --where "$where" --trimmed --no-default --launches 1 \
        --l2 flush >"$logs/$tool.log" 2>&1
      echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|hazard' "$logs/$tool.log" | head -n 2 | tr '\n' ' ')"
    done
    for t in gpu_sweep gpu_tunedb_cuda gpu_tunedb_cuda_factors gpu_cuda_driver gpu_measure \
      gpu_capture; do
      timeout 200 build/tests/$t >"$logs/$t.log" 2>&1
      echo "$t rc=$? $(grep -E 'test cases' "$logs/$t.log")"
    done
    ;;
  *) echo "unknown part '$part'" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s5_$part.tgz" "s5_$part" && rm -rf "$logs"
