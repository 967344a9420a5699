#!/usr/bin/env bash
# Builds (when needed) and runs the whole test suite. GPU tests report "Skipped" with the reason
# where there is no GPU; run this on a GPU machine to run them, with TUNER_REQUIRE_GPU=1 so that a
# GPU test that finds no working GPU fails instead of skipping.
# Usage: scripts/test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
scripts/setup.sh "$build_dir"
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)"
