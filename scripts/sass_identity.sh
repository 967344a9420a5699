#!/usr/bin/env bash
# Is a refactor of the sparse MLA kernels free? Compiles a fixed set of split kernel configs with
# NVRTC (build/bench/smla_cubin, no GPU) and writes each one's SASS without addresses or encodings
# into DIR; with a second DIR, reports which configs' SASS differs. The set covers sm_90 and
# sm_120, both schedules, 0/1/2 producer warps, the three MMA paths, fp8 and bf16 caches.
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
)
for config in "${configs[@]}"; do
  name=${config// /_}
  # shellcheck disable=SC2086
  "$tool" $config "$dir/$name.cubin" >"$dir/$name.ptxas"
  cuobjdump -sass "$dir/$name.cubin" | grep -E '^\s+/\*[0-9a-f]{4,}\*/' |
    sed -e 's#^\s*/\*[0-9a-f]*\*/##' -e 's#/\* 0x[0-9a-f]* \*/##' >"$dir/$name.sass"
done
[ -z "$base" ] && exit 0
differ=0
for config in "${configs[@]}"; do
  name=${config// /_}
  if cmp -s "$base/$name.sass" "$dir/$name.sass"; then
    echo "same  $name ($(wc -l <"$dir/$name.sass") SASS lines, split + combine)"
  else
    echo "DIFF  $name ($(wc -l <"$base/$name.sass") -> $(wc -l <"$dir/$name.sass") SASS lines)"
    differ=1
  fi
done
exit $differ
