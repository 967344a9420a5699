#!/usr/bin/env bash
# Issue 11 on the H200: the GPU tests with TUNER_REQUIRE_GPU=1 (a skip fails), the kill -9 + resume
# check (orphaned worker, lost or duplicated trials fail it), and batch 1 and 8 timed by the old
# protocol (OLD_TUNER: a build of the commit before issue 11, 32 launches per graph) and the new
# one (>= 4x L2 of distinct KV bytes per replay), for BENCHMARKS.md.
# Usage: scripts/h200_issue11.sh BUILD_DIR [OLD_TUNER]     (logs under $OUT, default /tmp/tuner-out)
set -u
build=${1:?usage: $0 BUILD_DIR [OLD_TUNER]}
old=${2:-}
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out"
failed=0
TUNER_REQUIRE_GPU=1 ctest --test-dir "$build" -R "gpu_|nogpu_" --output-on-failure \
  >"$out/issue11_gpu_tests.log" 2>&1 || failed=1
tail -n 5 "$out/issue11_gpu_tests.log"
OUT="$out" bash "$(dirname "$0")/h200_resume_check.sh" "$build/tuner/tuner" 20 \
  >"$out/issue11_resume.log" 2>&1 || failed=1
tail -n 8 "$out/issue11_resume.log"
"$build/tuner/tuner" bench --batches 1,8 >"$out/issue11_bench_new.log" 2>&1 || failed=1
cat "$out/issue11_bench_new.log"
if [ -n "$old" ]; then
  "$old" bench --batches 1,8 >"$out/issue11_bench_old.log" 2>&1 || failed=1
  cat "$out/issue11_bench_old.log"
fi
"$build/tuner/tuner" bench --batches 1 --kv-gib 0.1 >"$out/issue11_small_kv.log" 2>&1
echo "bench --kv-gib 0.1: exit $? (2 expected): $(tail -n 1 "$out/issue11_small_kv.log")"
[ "$failed" -eq 0 ] && echo "h200_issue11: OK" || { echo "h200_issue11: FAILED"; exit 1; }
