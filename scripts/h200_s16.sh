#!/usr/bin/env bash
# H200, planned in the fifteenth session (no device time was left for it):
#   fixed    where batch 64's cost that does not scale with the tiles goes. The winners' structure
#            (BLOCK_T 64, 4 + 2 warps, 2 stages, mma_path 1) at batch 64 with the CTA count held
#            (target_ctas 256: 4 splits a row; 128: 2) and topk 256 ... 4096, so each CTA runs
#            1, 2, 4, 8, 16 tiles (256 CTAs); merge 1 (combine, programmatic) and merge 0 (combine,
#            stream-ordered). The intercept of µs over tiles per CTA is the fixed cost, the slope a
#            tile's; merge 0 - merge 1 is what the programmatic launch hides of the combine.
#            Then the corner cases on this tree (merge 3's code is inside the split kernel).
# The correctness matrix rows still owed: `BUDGET_S=560 scripts/h200_s15.sh matrix
# fp8_ds_mla:1@1,7,128` (fp8, 64 heads).
# Usage: BUDGET_S=300 scripts/h200_s16.sh fixed   (carry .devcarry; logs in $OUT/s16_fixed.tgz)
step=${1:?usage: scripts/h200_s16.sh fixed}
source scripts/device_call_env.sh
logs=$out/s16_$step
mkdir -p "$logs"

case $step in
  fixed)
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    where="$where,producers=2,schedule=0"
    for target in 256 128; do
      for topk in 256 512 1024 2048 4096; do
        log=$logs/t${target}_k$topk.log
        XDG_CACHE_HOME=/tmp/s16_cache timeout 60 build/tuner/tuner bench --batches 64 \
          --topk "$topk" --where "$where,target_ctas=$target,merge=0|1" --no-default \
          --best-per merge >"$log" 2>&1
        echo "target $target topk $topk rc=$? $(grep -E '\(best of merge' "$log" |
          awk '{for (i = 2; i <= NF; i++) if ($i ~ /^merge=/) m = $i;
                for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) {print m, $i; break}}' |
          tr '\n' ' ')"
      done
    done
    TUNER_GPU_MATRIX=fp8_ds_mla:4 timeout 90 build/tests/gpu_sparse_mla_decode \
      -tce="every config*" >"$logs/corners.log" 2>&1
    echo "corners rc=$? $(grep -E 'test cases' "$logs/corners.log" | tail -n 1)"
    ;;
  *) echo "unknown step '$step': use fixed" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s16_$step.tgz" "s16_$step" && rm -rf "$logs"
