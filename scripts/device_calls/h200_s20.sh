#!/usr/bin/env bash
# H200, twentieth session.
#   ab      merge 5 (the row-slice merge, row_slice_merge.cuh) against the tree before it
#           (.devcarry/bin/tuner_old from 64ec03b, scripts/devcarry_old_tuner.sh): the winners'
#           structure (BLOCK_T 64, 4 + 2 warps, 2 stages, mma_path 1, schedule 0) at batches 1, 8,
#           32, 64, 128, 256 and 512, merges 1 / 2 / 4 on both builds and 5 on the new one, every
#           `target_ctas`, the fastest launch per merge, rounds old / new / old / new. Predicted
#           before the run: at batch 64 merge 5 ~1.5-2.5 µs under merge 4 (no combine launch and no
#           grid-wide wait; the reset kernel and the row's wait instead), 32 and 128 ~1-2 µs
#           under merge 4, batch 1 and 8 behind merge 4 (at most 8 splits a row); merges 1, 2, 4
#           unchanged within noise (the cluster merge's loops moved into slice_merge.cuh).
#   check   correctness: the repeat test (batch 64, every launch variant, merge 5 = variant 5),
#           then the matrix parts in PARTS (default the 16-head ones), compiled on the device;
#           REPEAT_S bounds the repeat test (default 300 s; it compiles the parts' keys).
# Usage: scripts/device_calls/h200_s20.sh ab|check   (carry .devcarry; logs in $OUT/s20_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s20.sh ab|check}
source scripts/device_call_env.sh
logs=$out/s20_$step
mkdir -p "$logs"
where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
where="$where,producers=2,schedule=0"
case $step in
  ab)
    source scripts/bench_ab.sh
    bench_ab "$logs" 1,8,32,64,128,256,512 "$where,merge=1|2|4|5" merge "$where,merge=1|2|4" ||
      exit 2
    for f in "$logs"/old_1.log "$logs"/new_1.log "$logs"/old_2.log "$logs"/new_2.log; do
      echo "== $(basename "$f") (batch merge target median_us)"
      grep -E "^ +[0-9]+ block_t.*best of" "$f" | awk '{m = ""; c = ""; t = "";
        for (i = 2; i <= NF; i++) { if (m == "" && $i ~ /^merge=/) m = $i;
        if (c == "" && $i ~ /^target_ctas=/) c = $i;
        if (t == "" && $i ~ /^[0-9]+\.[0-9]+$/) t = $i } print $1, m, c, t}' | tr '\n' ';'
      echo
    done
    grep -hE "wrong|FAIL|error" "$logs"/*.log | head -n 10 | cut -c1-300
    ;;
  check)
    source scripts/matrix_check.sh
    matrix_check "$logs" /tmp/s20_cubins "${PARTS:-fp8_ds_mla:4 bf16:4}" "${REPEAT_S:-300}" "${BUDGET_S:-560}"
    ;;
  *) echo "unknown step '$step': use ab or check" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s20_$step.tgz" "s20_$step" && rm -rf "$logs"
