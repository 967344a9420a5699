# shellcheck shell=bash disable=SC2034  # $out, $began: for the call scripts that source this
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
