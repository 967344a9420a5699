#!/usr/bin/env bash
# On the CPU machine: compiles the GPU correctness matrix's cubins for the H200 (sm_90, 232,448 B
# of opt-in shared memory a block) into .devcarry/matrix_cubins.tar.xz, which the device call's
# `scripts/h200_s15.sh matrix` unpacks into the cubin cache that gpu_sparse_mla_decode reads
# (TUNER_GPU_CUBIN_CACHE): the call then loads each part's cubins instead of compiling them (the
# fp8 32-head part compiled for over 150 s of a call). xz: 20 MB of bf16 16-head cubins pack to
# 0.8 MB. Keys that the device's NVRTC or shared memory make different are compiled there as
# before (the matrix prints how many came from the cache).
# Usage: scripts/devcarry_matrix_cubins.sh [PART...]   (default: all six; run after a build)
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(fp8_ds_mla:4 bf16:4 fp8_ds_mla:2 bf16:2 fp8_ds_mla:1 bf16:1)
dir=$(mktemp -d /tmp/matrix-cubins-XXXXXX)
trap 'rm -rf "$dir"' EXIT
build/tests/tuner_matrix_cubins "$dir/cubins" 90 232448 "${parts[@]}"
mkdir -p .devcarry
tar -C "$dir" -cf - cubins | xz -T0 -6 >.devcarry/matrix_cubins.tar.xz
echo "devcarry_matrix_cubins: $(du -h .devcarry/matrix_cubins.tar.xz | cut -f1) for ${parts[*]}"
