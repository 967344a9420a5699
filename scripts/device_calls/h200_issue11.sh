#!/usr/bin/env bash
# Issue 11 (second part) on the H200: the GPU tests with TUNER_REQUIRE_GPU=1 (a skip fails), among
# them gpu_sweep (fault candidate; kill -9 + resume; protocol-2 trials carry per-launch quantiles;
# --memory-gib under 4x L2 refused) and gpu_measure (per-launch quantiles from event nodes, the
# untimed L2 flush); then the default config at batch 1 and 8 timed both ways of keeping the L2
# out (--l2 sets: >= 4x L2 of distinct inputs per replay; --l2 flush: an untimed flush before every
# replay), for BENCHMARKS.md section 8; then the small-footprint refusal. A short table comes last.
# Usage (device machine, repo root, binaries in .devcarry/bin, libs in .devcarry/lib):
#   scripts/device_calls/h200_issue11.sh [tests|bench|all] [OLD_TUNER]
# OLD_TUNER: a tuner built before this change (32 launches per graph), timed the same way for the
# before/after figures. FULL=1 adds gpu_sparse_mla_decode (~7 min).
set -u
source scripts/device_env.sh >/dev/null
part=${1:-all}
old=${2:-}
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out"
export TUNER_REQUIRE_GPU=1 TUNER_BINARY=$PWD/$bin/tuner
failed=0
table=()
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader

run_test() {  # name timeout_s
  timeout "$2" "$bin/$1" >"$out/$1.log" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || failed=1
  table+=("$(printf '%-24s rc=%-3s %s' "$1" "$rc" "$(grep -E '^\[doctest\] test cases' "$out/$1.log")")")
  echo "== $1: rc=$rc"; grep -E "ERROR|FAILED|test cases|assertions" "$out/$1.log" | head -20
}

bench() {  # label args...
  local label=$1; shift
  timeout 240 "$@" >"$out/bench_$label.log" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || failed=1
  echo "== bench $label: rc=$rc"; cat "$out/bench_$label.log"
  # batch, median, replay p10/p90, launch p10/p90, launches per graph of the default config.
  while read -r line; do
    table+=("$(echo "$line" | awk -v l="$label" '{printf "bench %-10s batch %-4s median %8s us  replay p10/p90 %8s %8s  launch p10/p90 %8s %8s  graph %5s\n", l, $1, $(NF-9), $(NF-8), $(NF-7), $(NF-6), $(NF-5), $(NF-4)}')")
  done < <(grep "(default)" "$out/bench_$label.log")
}

if [ "$part" = tests ] || [ "$part" = all ]; then
  run_test gpu_cuda_driver 120
  run_test gpu_measure 120
  run_test gpu_capture 180
  run_test gpu_fp8_gemm 240
  run_test gpu_sweep 480
  [ "${FULL:-0}" = 1 ] && run_test gpu_sparse_mla_decode 480
fi
if [ "$part" = bench ] || [ "$part" = all ]; then
  bench sets "$bin/tuner" bench --batches 1,8 --l2 sets
  bench flush "$bin/tuner" bench --batches 1,8 --l2 flush
  bench sets-again "$bin/tuner" bench --batches 1,8 --l2 sets  # run-to-run drift
  [ -n "$old" ] && bench old "$old" bench --batches 1,8
  "$bin/tuner" bench --batches 1 --memory-gib 0.1 >"$out/bench_small_memory.log" 2>&1
  rc=$?
  [ "$rc" -eq 2 ] || failed=1
  table+=("$(printf 'bench --memory-gib 0.1: exit %s (2 expected): %s' "$rc" "$(tail -n 1 "$out/bench_small_memory.log" | cut -c1-150)")")
fi
echo "== summary"
printf '%s\n' "${table[@]}"
[ "$failed" -eq 0 ] && echo "h200_issue11: OK" || { echo "h200_issue11: FAILED"; exit 1; }
