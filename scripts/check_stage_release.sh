#!/usr/bin/env bash
# test_sass_stage_release: compiles pipelined sparse MLA split kernels with the tuner's NVRTC path
# (smla_cubin) and checks their SASS (scripts/sass_stage_release.py) for a consumer's ring-stage
# release issued while its last shared-memory load of the stage is still in flight. Each config
# below had such a release before the fence of 4eda912 (docs/device-logs/s13/
# cpu_sass_stage_release_scan.txt); the first is the one whose results moved on the H200. The
# check reads the compiler's output, not the kernel's source, so it fails if the fence goes.
# Exits 77 (CTest: skipped) without nvdisasm (scripts/fetch_nvdisasm.sh).
# Usage: scripts/check_stage_release.sh SMLA_CUBIN NVDISASM
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source scripts/sass_check_lib.sh
sass_check_start "$1" "$2"
# BLOCK_T BLOCK_H NUM_WARPS NUM_STAGES MMA_PATH PRODUCERS KV_UNPACK CTAS_PER_SM SCHEDULE KV ARCH
configs=(
  "32 16 4 2 2 2 0 2 1 fp8_ds_mla 90"
  "64 16 4 2 1 2 0 1 1 fp8_ds_mla 90"
  "64 16 8 2 1 2 0 1 0 fp8_ds_mla 90"
  "64 16 4 2 1 2 0 1 0 fp8_ds_mla 120"
  "32 16 4 2 2 1 0 1 0 fp8_ds_mla 120"
  "32 32 4 2 2 2 0 1 0 fp8_ds_mla 120"
)
failed=0
for config in "${configs[@]}"; do
  sass_of "$config" "$work/k.sass" -hex || { failed=1; continue; }
  if ! grep -q "SYNCS.ARRIVE" "$work/k.sass"; then
    echo "FAIL $config: no mbarrier arrive in its SASS"; failed=1; continue
  fi
  if report=$(python3 scripts/sass_stage_release.py <"$work/k.sass"); then
    echo "ok   $config: ${report##*$'\n'}"
  else
    echo "FAIL $config:"; echo "$report"; failed=1
  fi
done
exit $failed
