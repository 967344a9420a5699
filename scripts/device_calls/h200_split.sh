#!/usr/bin/env bash
# H200, after the split of core/cuda_driver.cpp, tuner/report.cpp, db/tunedb/tuning_db.cpp and
# templates/sparse_mla_decode/split.cuh into one file per idea (pure moves, no behaviour change):
# the GPU tests that reach the moved code, with TUNER_REQUIRE_GPU=1 (a skip fails). Builds on the
# device (build-h200), then:
#   driver: the driver wrapper now spread over core/cuda_*.cpp (gpu_cuda_driver, gpu_measure,
#           gpu_capture);
#   serve:  libtunedb_cuda, built from those sources, serving the winners that TuningDb's split
#           loader and lookup hand out (gpu_tunedb_cuda, gpu_tunedb_cuda_factors,
#           gpu_tunedb_cuda_fp8_gemm);
#   kernel: the split kernel from the split templates against the reference (gpu_sparse_mla_decode).
# Usage (repo root on the device): bash scripts/device_calls/h200_split.sh [all|build|driver|serve|kernel]
# Each part fits one 10-minute device call: `build`, `driver`, `serve`, `kernel` (a warm machine
# keeps build-h200 between calls). Writes $OUT/h200_split_<part>_summary.txt and
# $OUT/h200_split_<part>_logs.tgz.
set -u
source scripts/device_env.sh >/dev/null
part=${1:-all}
out=${OUT:-/tmp/tuner-out}
build=${BUILD:-$PWD/build-h200}
logs=$(mktemp -d)/h200_split_$part
mkdir -p "$out" "$logs"
summary=()
failed=0
note() { summary+=("$1"); echo "$1"; }

step() {  # step NAME TIMEOUT_S COMMAND...: runs it with a time limit, logs it, notes the result
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || failed=1
  note "$(printf '%-26s rc=%-3s %s' "$name" "$rc" \
    "$(grep -hE '^\[doctest\] (test cases|assertions)' "$logs/$name.log" | tr -s ' ' | paste -sd ' ')")"
  grep -hE "ERROR|FAILED" "$logs/$name.log" | head -12
}

finish() {
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$logs/gpu.txt" 2>&1
  printf '%s\n' "${summary[@]}" "h200_split ($part): $([ "$failed" -eq 0 ] && echo OK ||
    echo FAILED)" | tee "$out/h200_split_${part}_summary.txt"
  cp "$out/h200_split_${part}_summary.txt" "$logs/"
  tar -czf "$out/h200_split_${part}_logs.tgz" -C "$(dirname "$logs")" "$(basename "$logs")"
  exit "$failed"
}

gpu_tests=(gpu_cuda_driver gpu_measure gpu_capture gpu_tunedb_cuda gpu_tunedb_cuda_factors
           gpu_tunedb_cuda_fp8_gemm gpu_sparse_mla_decode)

if [ "$part" = all ] || [ "$part" = build ]; then
  cuda_root=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
  step configure 300 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCUDAToolkit_ROOT="$cuda_root" -DTUNER_FUZZ=OFF
  [ "$failed" -eq 0 ] || { tail -30 "$logs/configure.log"; finish; }
  step build 540 cmake --build "$build" -j "$(nproc)" --target tuner tunedb_cuda "${gpu_tests[@]}"
  [ "$failed" -eq 0 ] || { grep -E "error" "$logs/build.log" | head -30; finish; }
fi

for test in "${gpu_tests[@]}"; do
  if [ "$part" != build ] && [ ! -x "$build/tests/$test" ]; then
    note "$test: not built in $build: run 'bash scripts/device_calls/h200_split.sh build' first"
    failed=1
    finish
  fi
done

export TUNER_REQUIRE_GPU=1 TUNER_BINARY="$build/tuner/tuner"
if [ "$part" = all ] || [ "$part" = driver ]; then
  step gpu_cuda_driver 120 "$build/tests/gpu_cuda_driver"
  step gpu_measure 180 "$build/tests/gpu_measure"
  step gpu_capture 180 "$build/tests/gpu_capture"
fi
if [ "$part" = all ] || [ "$part" = serve ]; then
  step gpu_tunedb_cuda 240 "$build/tests/gpu_tunedb_cuda"
  step gpu_tunedb_cuda_factors 120 "$build/tests/gpu_tunedb_cuda_factors"
  step gpu_tunedb_cuda_fp8_gemm 180 "$build/tests/gpu_tunedb_cuda_fp8_gemm"
fi
if [ "$part" = all ] || [ "$part" = kernel ]; then
  TUNER_GPU_LOG="$logs/gpu_sparse_mla_decode_checks.log" \
    step gpu_sparse_mla_decode 540 "$build/tests/gpu_sparse_mla_decode"
fi
finish
