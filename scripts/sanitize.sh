#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer included),
# in its own build directory. GPU tests skip as in scripts/test.sh. Left out: test_tunedb_python,
# test_tunedb_cuda_python and test_regret_script (CPython would need the ASan runtime preloaded to load the
# instrumented libtunedb.so / libtunedb_cuda.so) and the
# fuzz smoke test (its own clang ASan + UBSan build, run by scripts/test.sh), the Slurm cluster
# test (daemons and NVRTC compiles for minutes; scripts/test.sh runs it, merge's code is covered
# here by test_merge), and test_install (it installs this build's instrumented libraries and links
# plain examples and CPython against them; scripts/test.sh runs it on the normal build), and the
# test that compiles every config of the sparse MLA space (1,200 NVRTC compiles, ~20 min on CI's
# 2 cores: the time is NVRTC's, which is not instrumented; the host code on that path, source
# generation, the compile wrapper and the ptxas parse, runs under the sanitizers in the other
# compile tests, which compile the baseline and sampled configs; scripts/test.sh runs it), and
# test_sass_stage_release and test_sass_producer_ids (they check ptxas's output with nvdisasm,
# which setup fetches into the normal build only; scripts/test.sh runs them).
# Usage: scripts/sanitize.sh [BUILD_DIR]   (default: build-asan)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-asan}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT=/usr/local/cuda \
  -DTUNER_SANITIZE=ON -DTUNER_FUZZ=OFF
cmake --build "$build_dir" -j"$(nproc)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$PWD/tests/support/lsan.supp"
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" \
  -E "^(test_tunedb_python|test_tunedb_cuda_python|test_regret_script|fuzz_tunedb_smoke|test_slurm_plan|test_install|test_sass_stage_release|test_sass_producer_ids|test_sparse_mla_compile:every config of the space compiles.*)$"
