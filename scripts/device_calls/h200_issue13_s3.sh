#!/usr/bin/env bash
# Issue 13, part 3 on the H200: the serving launcher generic over families (argument records
# declared by each family) and fp8_gemm served from a frozen DB. Builds on the device, then runs
# with TUNER_REQUIRE_GPU=1 (a skip fails):
#   1. gpu_tunedb_cuda: sparse MLA decode through the generic launch (launcher vs the reference at
#      batches 1..512, eager and graph-replayed; 32 launches captured with no allocation; the
#      wrong-size record refused through C++ and C; the family's typed C wrapper);
#   2. gpu_tunedb_cuda_fp8_gemm: fp8_gemm winners (split-K and not) frozen by `tuner freeze`,
#      launched vs the family's fp32 reference at batches 1, 3, 64, 100, 256 (exact, bucket) and
#      an untuned shape (default), eager and graph-replayed; the C API's typed wrapper and refusals;
#   3. where torch imports: a short sweep + freeze of the default sparse MLA shape, then
#      tests/gpu_tunedb_torch.py (the family's typed op and the generic tunedb.torch.launch vs a
#      torch reference, eager and in torch.cuda.graph) and examples/serve/serve_torch.py;
#   4. the C example (every family's record, open, workspace) and examples/serve/serve.cpp.
# Usage (repo root on the device): bash scripts/device_calls/h200_issue13_s3.sh [all|build|tests|torch]
# Writes $OUT/h200_issue13_s3_summary.txt and $OUT/h200_issue13_s3_logs.tgz.
set -u
source scripts/device_env.sh >/dev/null
part=${1:-all}
out=${OUT:-/tmp/tuner-out}
build=${BUILD:-$PWD/build-h200}
logs=$(mktemp -d)/h200_issue13_s3
mkdir -p "$out" "$logs"
work=$(mktemp -d)
pypath="$PWD/db/python:$PWD/kernels/sparse_mla_decode/python"
summary=()
failed=0
note() { summary+=("$1"); echo "$1"; }

step() {  # step NAME TIMEOUT_S COMMAND...: runs it with a time limit, logs it, notes the result
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || failed=1
  note "$(printf '%-22s rc=%-3s %s' "$name" "$rc" \
    "$(grep -hE '^\[doctest\] (test cases|assertions)' "$logs/$name.log" | tr -s ' ' | paste -sd ' ')")"
  grep -hE "ERROR|FAILED|OK$|ratio" "$logs/$name.log" | head -12
}

finish() {
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$logs/gpu.txt" 2>&1
  printf '%s\n' "${summary[@]}" "h200_issue13_s3 ($part): $([ "$failed" -eq 0 ] && echo OK ||
    echo FAILED)" | tee "$out/h200_issue13_s3_summary.txt"
  cp "$out/h200_issue13_s3_summary.txt" "$logs/"
  tar -czf "$out/h200_issue13_s3_logs.tgz" -C "$(dirname "$logs")" "$(basename "$logs")"
  exit "$failed"
}

if [ "$part" = all ] || [ "$part" = build ]; then
  cuda_root=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
  step configure 300 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCUDAToolkit_ROOT="$cuda_root" -DTUNER_FUZZ=OFF
  if [ "$failed" -ne 0 ] && [ -x .devcarry/build/tests/gpu_tunedb_cuda_fp8_gemm ]; then
    # No build here (a dependency missing): the slim build carried from the CPU machine.
    tail -5 "$logs/configure.log"
    failed=0
    build=$PWD/.devcarry/build
    note "configure failed here: running the carried build .devcarry/build instead"
  fi
  [ "$failed" -eq 0 ] || { tail -30 "$logs/configure.log"; finish; }
  [ "$build" = "$PWD/.devcarry/build" ] || step build 500 cmake --build "$build" -j "$(nproc)" --target tuner tunedb_cuda gpu_tunedb_cuda \
    gpu_tunedb_cuda_fp8_gemm tunedb_cuda_c_example tunedb_serve_example
  [ "$failed" -eq 0 ] || { grep -E "error" "$logs/build.log" | head -30; finish; }
fi

export TUNER_REQUIRE_GPU=1 TUNER_BINARY="$build/tuner/tuner"
if [ "$part" = all ] || [ "$part" = tests ]; then
  step gpu_tunedb_cuda 300 "$build/tests/gpu_tunedb_cuda"
  step gpu_tunedb_cuda_fp8_gemm 300 "$build/tests/gpu_tunedb_cuda_fp8_gemm"
fi

if [ "$part" = all ] || [ "$part" = torch ]; then
  step sweep 240 "$build/tuner/tuner" sweep --db "$work/tuning.db" --batches 1,64 \
    --cache-dir "$work/cache"
  step freeze 120 "$build/tuner/tuner" freeze --db "$work/tuning.db" --out "$work/frozen.db" \
    --cache-dir "$work/cache"
  step c_example 60 "$build/deploy/tunedb_cuda_c_example" "$work/frozen.db" sparse_mla_decode \
    "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048" 512
  step readme_cpp 120 "$build/deploy/tunedb_serve_example" "$work/frozen.db" 1 37 64 512
  if python3 -c "import torch" 2>/dev/null; then
    export TUNEDB_LIBRARY="$build/db/libtunedb.so" PYTHONPATH="$pypath" \
      TUNEDB_CUDA_LIBRARY="$build/deploy/libtunedb_cuda.so"
    step torch 300 python3 tests/gpu_tunedb_torch.py "$work/frozen.db"
    step readme_py 120 python3 examples/serve/serve_torch.py "$work/frozen.db"
  else
    failed=1
    note "torch                  not run: torch does not import here"
  fi
fi
finish
