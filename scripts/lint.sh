#!/usr/bin/env bash
# Style checks: clang-format (no diff allowed) and clang-tidy (repo .clang-tidy) over the C++ tree.
# Usage: scripts/lint.sh [BUILD_DIR]   (BUILD_DIR must hold compile_commands.json)
set -uo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
files=$(git ls-files '*.cpp' '*.hpp' '*.h' '*.cuh' '*.c')
status=0
clang-format --dry-run --Werror $files || status=1
sources=$(git ls-files 'core/*.cpp' 'tuner/*.cpp' 'kernels/*.cpp' 'db/*.cpp')
clang-tidy -p "$build_dir" --quiet $sources 2>/dev/null | grep -E "warning:|error:" && status=1
exit $status
