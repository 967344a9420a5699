#!/usr/bin/env bash
# H200, planned in the sixteenth session (no device time was left for it):
#   fixed_ncu  where batch 64's ~12 µs of fixed cost inside the split kernel goes (BENCHMARKS.md
#              section 7, sixteenth session: the tiles stream at 97 % of copy bandwidth with two
#              CTAs an SM, and the part that does not scale with them is ~16 µs, ~4 of it the
#              combine). Nsight Compute's full set with the source page on the winners' split
#              kernel (BLOCK_T 64, 4 + 2 warps, 2 stages, mma_path 1, merge 4, target_ctas 256) at
#              batch 64 with topk 256 (one tile a CTA: nearly all of it fixed cost) and 2048 (eight):
#              per-opcode instructions and stall samples and the hottest SASS lines
#              (scripts/ncu_sass_summary.py), duration, DRAM throughput, and the warp states. The
#              difference between the two summaries is the seven tiles; what the one-tile launch
#              spends beyond one tile is the fixed part's content.
# The matrix still owed (merge 4 at 32 and 64 heads; the reference, rewritten in the sixteenth
# session, checked against the CPU fp64 one first): `BUDGET_S=560 bash scripts/h200_s15.sh matrix
# fp8_ds_mla:2 bf16:2 bf16:1`, then `... matrix fp8_ds_mla:1` (one or two calls). The reference
# sweep with merge 4: `BUDGET_S=585 timeout 595 bash scripts/h200_s9.sh a`.
# Usage: scripts/h200_s17.sh fixed_ncu   (carry .devcarry; logs in $OUT/s17_STEP.tgz)
step=${1:?usage: scripts/h200_s17.sh fixed_ncu}
source scripts/device_call_env.sh
logs=$out/s17_$step
mkdir -p "$logs"

case $step in
  fixed_ncu)
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    where="$where,producers=2,schedule=0,merge=4,target_ctas=256"
    wanted="Duration|DRAM Throughput|Executed Ipc A|Issue Slots Busy|Executed Instructions |"
    wanted="${wanted}Warp Cycles Per Issued|Registers Per|Achieved Occupancy|L2 Hit Rate"
    for topk in 256 2048; do
      rep=$logs/b64_k$topk
      # tuner bench times in its worker process: ncu must follow it.
      XDG_CACHE_HOME=/tmp/s17_cache timeout 150 ncu --clock-control none --target-processes all \
        --set full --import-source yes -k regex:split_pipelined -c 1 -o "$rep" \
        build/tuner/tuner bench --batches 64 --topk "$topk" --where "$where" --no-default \
        >"$rep.run.log" 2>&1
      echo "== topk $topk: ncu rc=$?"
      ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.sass.csv" 2>&1
      ncu -i "$rep.ncu-rep" --page details >"$rep.details.txt" 2>&1
      python3 scripts/ncu_sass_summary.py "$rep.sass.csv" 40 >"$rep.summary.txt" 2>&1
      grep -E "$wanted" "$rep.details.txt" | sed -E 's/ +/ /g' | cut -c1-110 | head -14
      rm -f "$rep.sass.csv" "$rep.ncu-rep"
    done
    for topk in 256 2048; do echo "== topk $topk"; head -30 "$logs/b64_k$topk.summary.txt"; done
    ;;
  *) echo "unknown step '$step': use fixed_ncu" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s17_$step.tgz" "s17_$step" && rm -rf "$logs"
