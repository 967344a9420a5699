#!/usr/bin/env bash
# H200, owed from the fourteenth session: the correctness matrix on the fenced kernel, judged on
# the device (compare_on_device, 1cc440b), part by part, after the check that the device judgment
# agrees with the host's (gpu_sparse_mla_row_errors). Each part runs every compile key x launch
# variant at batch {1, 7, 64, 128} x topk {2048, 600, 5}; a part stopped by its limit says so
# ("rc=124") and the rows it printed stand. Pass a part list to run others (default: all six).
# Usage: BUDGET_S=560 scripts/h200_s15.sh [PART ...]   (carry .devcarry; logs in $OUT/s15)
source scripts/device_call_env.sh
logs=$out/s15
mkdir -p "$logs"
left() { echo $((${BUDGET_S:-560} - $(date +%s) + began)); }
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(fp8_ds_mla:4 bf16:4 fp8_ds_mla:2 bf16:2 fp8_ds_mla:1 bf16:1)

build/tests/gpu_sparse_mla_row_errors >"$logs/row_errors.log" 2>&1
echo "row_errors rc=$? $(grep -E 'test cases' "$logs/row_errors.log" | tail -n 1)"
for part in "${parts[@]}"; do
  remaining=$(left)
  [ "$remaining" -gt 60 ] || { echo "$part: not run (${remaining} s left)"; continue; }
  name=${part//:/_}
  TUNER_GPU_MATRIX=$part TUNER_GPU_LOG=$logs/checks_$name.log timeout "$((remaining - 20))" \
    build/tests/gpu_sparse_mla_decode -tc="every config*" >"$logs/matrix_$name.log" 2>&1
  echo "$part rc=$? at $(($(date +%s) - began)) s"
done
grep -h "FAIL " "$logs"/matrix_*.log | head -n 20 | cut -c1-300
grep -hE "^(fp8_ds_mla|bf16) " "$logs"/matrix_*.log
tar -C "$out" -czf "$out/s15.tgz" s15 && rm -rf "$logs"
