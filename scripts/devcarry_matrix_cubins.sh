#!/usr/bin/env bash
# On the CPU machine: compiles the GPU correctness matrix's cubins for the H200 (sm_90, its opt-in
# shared memory a block from core's arch table) into .devcarry/matrix_cubins.tar.xz, which the
# device call's `scripts/device_calls/h200_s15.sh matrix` unpacks into the cubin cache that
# gpu_sparse_mla_decode reads (TUNER_GPU_CUBIN_CACHE): the call then loads each part's cubins
# instead of compiling them (the fp8 32-head part compiled for over 150 s of a call). Keys that
# the device's NVRTC or shared memory make different are compiled there as before (the matrix
# prints how many came from the cache). Measured on the 2-core CPU machine (seventeenth session):
#   fp8_ds_mla:4 bf16:4           917 keys,  ~8 min,  6.0 MB xz
#   fp8_ds_mla:2 bf16:2 fp8_ds_mla:1 bf16:1   2,569 keys (the 64-head parts hold the 32-head
#                                 keys), 30 min, 354 MB of cubins, 29.5 MB xz
# .devcarry is ~48 MB without it and a call carries at most 64 MiB: the 32- and 64-head archive
# needs a call whose carry leaves out what the matrix does not use (or one part per call).
# Usage: scripts/devcarry_matrix_cubins.sh [PART...]   (default: all six; run after a build)
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(fp8_ds_mla:4 bf16:4 fp8_ds_mla:2 bf16:2 fp8_ds_mla:1 bf16:1)
dir=$(mktemp -d /tmp/matrix-cubins-XXXXXX)
trap 'rm -rf "$dir"' EXIT
build/tests/tuner_matrix_cubins "$dir/cubins" sm_90 "${parts[@]}"
mkdir -p .devcarry
tar -C "$dir" -cf - cubins | xz -T0 -6 >.devcarry/matrix_cubins.tar.xz
echo "devcarry_matrix_cubins: $(du -h .devcarry/matrix_cubins.tar.xz | cut -f1) for ${parts[*]}"
