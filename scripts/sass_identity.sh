#!/usr/bin/env bash
# Is a refactor of the sparse MLA kernels free? Compiles a fixed set of split kernel configs with
# NVRTC (build/bench/smla_cubin, no GPU) and writes the SASS of each kernel of each program (the
# split and the combine kernels) without addresses or encodings into DIR/CONFIG/KERNEL.sass; with
# a second DIR, reports per kernel whether its SASS differs, and kernels only one side has (lines
# are compared without their trailing blanks, whose width cuobjdump sets per cubin). The
# set covers sm_90 and sm_120, the three schedules, 0/1/2/4 producer warps, the three MMA paths, fp8
# and bf16 caches. (A DIR written before the per-kernel files holds CONFIG.sass, every kernel in one:
# compare those by hand.)
# Needs cuobjdump and nvdisasm on PATH (the CUDA toolkit, or pip's nvidia-cuda-cuobjdump and
# nvidia-cuda-nvdisasm).
# Usage: scripts/sass_identity.sh DIR [BASE_DIR]   (e.g. DIR before the change, again after)
set -euo pipefail
dir=${1:?usage: scripts/sass_identity.sh DIR [BASE_DIR]}
base=${2:-}
tool=${SMLA_CUBIN:-build/bench/smla_cubin}
mkdir -p "$dir"
# BLOCK_T BLOCK_H NUM_WARPS NUM_STAGES MMA_PATH PRODUCERS KV_UNPACK CTAS_PER_SM SCHEDULE KV ARCH
configs=(
  "64 16 4 2 1 2 0 1 0 fp8_ds_mla 90" "64 16 4 2 1 2 0 1 1 fp8_ds_mla 90"
  "64 16 4 2 1 0 0 1 0 fp8_ds_mla 90" "32 16 4 3 2 2 0 1 0 fp8_ds_mla 120"
  "64 16 4 2 1 2 0 1 0 bf16 90" "32 16 4 2 1 1 1 2 0 fp8_ds_mla 90"
  "32 16 8 4 1 2 0 1 1 fp8_ds_mla 120" "16 32 4 2 0 0 0 1 0 fp8_ds_mla 90"
  "16 16 4 2 0 0 0 1 0 bf16 90" "32 16 8 3 0 0 0 1 0 fp8_ds_mla 120"
  "64 16 4 2 1 2 0 1 2 fp8_ds_mla 90" "32 16 4 3 1 2 0 1 2 bf16 120"
  "64 16 4 3 1 4 0 1 0 fp8_ds_mla 90" "64 16 4 2 2 4 0 1 0 fp8_ds_mla 120"
)
for config in "${configs[@]}"; do
  name=${config// /_}
  rm -rf "${dir:?}/$name"
  mkdir -p "$dir/$name"
  # shellcheck disable=SC2086
  "$tool" $config "$dir/$name.cubin" >"$dir/$name.ptxas"
  cuobjdump -sass "$dir/$name.cubin" | awk -v out="$dir/$name" '
    /Function : / { file = out "/" $NF ".sass"; next }
    file != "" && /^[ \t]+\/\*[0-9a-f]+\*\// {
      sub(/^[ \t]*\/\*[0-9a-f]*\*\//, ""); gsub(/\/\* 0x[0-9a-f]* \*\//, "")
      sub(/[ \t]+$/, ""); print > file }'
done
[ -z "$base" ] && exit 0
differ=0
for config in "${configs[@]}"; do
  name=${config// /_}
  for kernel in $(find "$base/$name" "$dir/$name" -name '*.sass' -printf '%f\n' 2>/dev/null |
    sort -u); do
    label="$name ${kernel%.sass}"
    if [ ! -f "$base/$name/$kernel" ]; then
      echo "new   $label ($(wc -l <"$dir/$name/$kernel") SASS lines)"
    elif [ ! -f "$dir/$name/$kernel" ]; then
      echo "GONE  $label"
      differ=1
    elif cmp -s "$base/$name/$kernel" "$dir/$name/$kernel"; then
      echo "same  $label ($(wc -l <"$dir/$name/$kernel") SASS lines)"
    else
      echo "DIFF  $label ($(wc -l <"$base/$name/$kernel") -> $(wc -l <"$dir/$name/$kernel") lines)"
      differ=1
    fi
  done
done
exit $differ
