#!/usr/bin/env bash
# test_sass_producer_ids: compiles producer-warp sparse MLA split kernels with the tuner's NVRTC
# path (smla_cubin) and checks in their SASS where the producers' token ids come from
# (templates/sparse_mla_decode/producer_ids.cuh): under the tile-dividing schedules and for bf16
# caches by cp.async into shared memory (LDGSTS, waited for by cp.async.wait_group 1: DEPBAR.LE
# SB0, 0x1) and no 32-bit register load; for fp8 under per-row splits by a 32-bit register load
# (LDG.E.CONSTANT) and no LDGSTS. Loaded into registers a tile ahead, ptxas waited for that load
# before the free stage's wait under the tile-dividing schedules (BENCHMARKS.md section 7,
# twenty-sixth session: ncu at batch 264); fp8 per-row splits measured 0-1 % slower staged.
# Exits 77 (CTest: skipped) without nvdisasm (scripts/fetch_nvdisasm.sh).
# Usage: scripts/check_producer_ids.sh SMLA_CUBIN NVDISASM
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source scripts/sass_check_lib.sh
sass_check_start "$1" "$2"
# BLOCK_T BLOCK_H NUM_WARPS NUM_STAGES MMA_PATH PRODUCERS KV_UNPACK CTAS_PER_SM SCHEDULE KV ARCH
configs=(
  "64 16 4 2 1 2 0 1 0 fp8_ds_mla 90" "64 16 4 2 1 2 0 2 2 fp8_ds_mla 90"
  "64 16 4 2 1 2 0 1 2 fp8_ds_mla 90" "32 16 4 3 1 2 0 1 0 bf16 90"
  "32 16 8 4 1 1 0 1 0 fp8_ds_mla 120" "32 16 4 3 2 2 0 1 2 fp8_ds_mla 120"
)
failed=0
for config in "${configs[@]}"; do
  sass_of "$config" "$work/all.sass" || { failed=1; continue; }
  awk '/^[[:space:]]*\.text\./ { split_kernel = ($0 ~ /split_pipelined/) } split_kernel' \
    "$work/all.sass" >"$work/split.sass"
  staged=$(grep -c 'LDGSTS' "$work/split.sass")
  waits=$(grep -c 'DEPBAR.LE SB0, 0x1' "$work/split.sass")
  register_ids=$(grep -cE 'LDG\.E\.CONSTANT R[0-9]+,' "$work/split.sass")
  read -r _ _ _ _ _ _ _ _ schedule kv _ <<<"$config"
  if [ "$kv" = bf16 ] || [ "$schedule" != 0 ]; then
    want="staged"
    [ "$staged" -ge 1 ] && [ "$waits" -ge 1 ] && [ "$register_ids" -eq 0 ] && got=$want
  else
    want="registers"
    [ "$staged" -eq 0 ] && [ "$register_ids" -ge 1 ] && got=$want
  fi
  if [ "${got:-}" != "$want" ]; then
    echo "FAIL $config: want ids $want; LDGSTS $staged, DEPBAR.LE SB0 0x1 $waits," \
      "32-bit LDG.E.CONSTANT $register_ids"
    failed=1
  else
    echo "ok   $config: ids $want (LDGSTS $staged, 32-bit LDG.E.CONSTANT $register_ids)"
  fi
  got=
done
exit $failed
