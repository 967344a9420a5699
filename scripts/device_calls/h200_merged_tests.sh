#!/usr/bin/env bash
# H200, after merging issues 9 and 11-14: the GPU tests of the merged tree with TUNER_REQUIRE_GPU=1
# (scripts/device_calls/h200_issue11.sh tests: driver, measure, capture, fp8_gemm, sweep) and the launcher test
# (gpu_tunedb_cuda, issue 13), run directly from the carried binaries.
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh
out=${OUT:-/tmp/tuner-out}
timeout 420 bash scripts/device_calls/h200_issue11.sh tests >"$out/i11_tests.txt" 2>&1
echo "h200_issue11 tests rc=$?"; tail -8 "$out/i11_tests.txt"
TUNER_REQUIRE_GPU=1 TUNER_BINARY=$PWD/.devcarry/bin/tuner timeout 150 .devcarry/bin/gpu_tunedb_cuda \
  >"$out/i13_gpu_tunedb_cuda.log" 2>&1
echo "gpu_tunedb_cuda rc=$?"; grep -E "test cases|assertions|ERROR|ratio" "$out/i13_gpu_tunedb_cuda.log" | head -12
