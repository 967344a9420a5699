# Sourced by the H200 call scripts (bash): matrix_check LOGS CUBIN_DIR PARTS REPEAT_S BUDGET_S runs
# the repeat test (batch 64, every launch variant; results that move between repeats) over the
# matrix parts PARTS ("fp8_ds_mla:4 bf16:4": KV format and TP), bounded by REPEAT_S, then the
# correctness matrix of each part (batches 1, 7, 64, 128 x topk 2048, 600, 5, judged on the
# device) while BUDGET_S seconds since $began last; the repeat test's compiles in CUBIN_DIR serve
# the matrix. Per-check logs LOGS/checks_PART.log (megabytes: reduce them with
# scripts/checks_summary.sh). Expects $began (device_call_env.sh).
matrix_check() {
  local logs=$1 cubins=$2 parts=$3 repeat_s=$4 budget_s=$5 part name remaining
  export TUNER_GPU_CUBIN_CACHE=$cubins
  TUNER_GPU_MATRIX=${parts// /,} TUNER_GPU_LOG=$logs/repeat_moved.log timeout "$repeat_s" \
    build/tests/gpu_sparse_mla_repeat >"$logs/repeat.log" 2>&1
  echo "repeat rc=$? at $(($(date +%s) - began)) s: $(grep -E 'test cases|moved' "$logs/repeat.log" | tail -n 2 | tr '\n' ' ')"
  for part in $parts; do
    remaining=$((budget_s - $(date +%s) + began))
    [ "$remaining" -gt 60 ] || { echo "$part: not run (${remaining} s left)"; continue; }
    name=${part//[:@,]/_}
    TUNER_GPU_MATRIX=$part TUNER_GPU_MATRIX_BATCHES=1,7,64,128 \
      TUNER_GPU_LOG=$logs/checks_$name.log timeout "$((remaining - 20))" \
      build/tests/gpu_sparse_mla_decode -tc="every config*" >"$logs/matrix_$name.log" 2>&1
    echo "$part rc=$? at $(($(date +%s) - began)) s"
  done
  grep -h "FAIL \|ERROR\|CRASHED" "$logs"/matrix_*.log "$logs/repeat.log" | head -n 20 | cut -c1-300
  grep -hE "^(fp8_ds_mla|bf16) " "$logs"/matrix_*.log
}
