#!/usr/bin/env bash
# H200, twenty-fourth session.
#   check     correctness of 419f545's combine (the whole-row path) where the sweeps and the
#             16-head runs did not reach: the repeat test and the correctness matrix over PARTS
#             (default: fp8 and bf16 at 32 heads, two head groups a batch item at BLOCK_H 16).
# Usage: scripts/h200_s24.sh check   (carry .devcarry; logs in $OUT/s24_STEP.tgz)
step=${1:?usage: scripts/h200_s24.sh check}
source scripts/device_call_env.sh
logs=$out/s24_$step
mkdir -p "$logs"
case $step in
  check)
    source scripts/matrix_check.sh
    matrix_check "$logs" /tmp/s24_cubins "${PARTS:-fp8_ds_mla:2 bf16:2}" "${REPEAT_S:-200}" \
      "${BUDGET_S:-540}"
    ;;
  *) echo "unknown step '$step': use check" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s24_$step.tgz" "s24_$step" && rm -rf "$logs"
