# shellcheck shell=bash disable=SC2034  # $out, $began, $logs, $winners: for the call scripts that source this
# Sourced at the start of an H200 call script (bash): the GPU machine's NVRTC and the carried
# build's libraries (device_env.sh, device_build_link.sh), GPU tests that fail instead of skipping
# when the GPU does not answer, $out (the tool's $OUT) and $began (the call's start, in seconds).
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
export TUNER_REQUIRE_GPU=1
out=${OUT:-/tmp/tuner-out}
began=$(date +%s)

# run_gpu_test LOG LIMIT_S TEST [ARGS...]: build/tests/TEST into LOG under a time limit; prints
# its exit status, the time into the call and doctest's counts.
run_gpu_test() {
  local log=$1 limit=$2 test=$3
  shift 3
  timeout "$limit" "build/tests/$test" "$@" >"$log" 2>&1
  echo "$test rc=$? at $(($(date +%s) - began)) s" \
    "$(grep -hE '^\[doctest\] (test cases|assertions)' "$log" | tr -s ' ' | paste -sd ' ')"
}

# matrix_parts PARTS LIMIT_S [DOCTEST ARGS...]: gpu_sparse_mla_decode on the matrix parts PARTS
# ("fp8_ds_mla:4,bf16:4": KV format and TP) under LIMIT_S (at least 30 s), into $logs (call_logs)
# with its per-check log, gzipped (scripts/checks_summary.sh reads it); prints the test's rows.
matrix_parts() {
  local parts=$1 limit=$2
  shift 2
  TUNER_GPU_MATRIX=$parts TUNER_GPU_LOG=$logs/matrix_checks.log run_gpu_test \
    "$logs/gpu_sparse_mla_decode.log" "$((limit > 30 ? limit : 30))" gpu_sparse_mla_decode "$@"
  grep -E "^(fp8|bf16)|checks run|compile keys" "$logs/gpu_sparse_mla_decode.log" | cut -c1-160
  gzip -f "$logs/matrix_checks.log" 2>/dev/null
}

# call_logs SESSION STEP: the step's log folder $OUT/SESSION_STEP (made; as $logs) and the card's
# name and clock first in the call's output. Sets $winners: the config values every fp8 winner from
# batch 2 up shares (BENCHMARKS.md section 7), for --where filters.
call_logs() {
  logs=$out/$1_$2
  mkdir -p "$logs"
  winners="block_h=16,kv_unpack=0,mma_path=1,producers=2,num_warps=4,block_t=64,num_stages=2"
  nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
}

# default_sweep_report LOGS SESSION: the default fp8 sweep of this tree, cold and warm
# (h200_issue12_s4.sh main, in $WORK = /tmp/SESSION_sweep), its logs and `tuner report` into LOGS
# (LOGS/reference-sweep), the DB as $OUT/SESSION-sweep.sqlite.gz; prints the sweep's last lines.
default_sweep_report() {
  local logs=$1 session=$2
  export WORK=/tmp/${session}_sweep
  mkdir -p "$WORK"
  bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
  cp "$WORK"/cold.log "$WORK"/warm.log "$logs/" 2>/dev/null
  build/tuner/tuner report --db "$WORK/tuned.db" --out "$logs/reference-sweep" \
    >"$logs/report.log" 2>&1
  echo "report rc=$?"
  gzip -c "$WORK/tuned.db" >"$out/$session-sweep.sqlite.gz"
  cut -c1-220 "$logs/main.txt" | tail -n 9
}

# best_rows LOG...: the `tuner bench --best-per` rows of LOGs, one line each: the batch, the
# producers / num_stages / schedule / target_ctas values, the median µs; by batch.
best_rows() {
  grep -hE "^ +[0-9]+ block_t.*best of" "$@" | awk '{
    line = $1
    for (i = 2; i <= NF && $i !~ /^[0-9]+\.[0-9]+$/; i++)
      if ($i ~ /^(producers|num_stages|schedule|target_ctas)=/) line = line " " $i
    print line, $i }' | sort -n -s -k1,1
}
