#!/usr/bin/env bash
# H200 steps of the twenty-sixth session (2026-12-05).
#   ncu   where the tile-dividing kernel loses 6-7 % to schedule 0's at equal division: batch 264
#         on the H200 (264 resident CTAs) is one whole row a CTA under both schedule 0 (one split
#         a row) and schedule 2 (W = 1, no tail, no combine), yet the twenty-fifth session timed
#         97 against 104 us. Nsight Compute's full set with the source page for schedule 0
#         (1-CTA bound, the sweep's) and schedule 2 under both bounds (token softmax under 2,
#         whole-tile softmax under 1): per-opcode executed instructions and stall samples
#         (scripts/ncu_sass_summary.py) and the details pages.
# Usage: scripts/h200_s26.sh ncu   (carry .devcarry; logs in $OUT/s26_STEP.tgz; summary last)
step=${1:?usage: scripts/h200_s26.sh ncu}
source scripts/device_call_env.sh
logs=$out/s26_$step
mkdir -p "$logs"
base="block_h=16,block_t=64,num_stages=2,kv_unpack=0,mma_path=1,num_warps=4,producers=2"
base="$base,merge=1,target_ctas=128"
wanted="Duration|DRAM Throughput|Executed Ipc A|Issue Slots Busy|Executed Instructions |"
wanted="${wanted}Warp Cycles Per Issued|Registers Per|Achieved Occupancy|L2 Hit Rate|L1/TEX Hit"
case $step in
  ncu)
    for variant in s0_c1:schedule=0,ctas_per_sm=1 s2_c2:schedule=2,ctas_per_sm=2 \
      s2_c1:schedule=2,ctas_per_sm=1; do
      name=${variant%%:*}
      rep=$logs/b264_$name
      # tuner bench runs the candidates in its worker process: ncu must follow it.
      timeout 160 ncu --clock-control none --target-processes all --set full --import-source yes \
        -k regex:split_pipelined -c 1 -o "$rep" .devcarry/bin/tuner bench --batches 264 \
        --no-default --where "$base,${variant#*:}" >"$rep.run.log" 2>&1
      echo "== $name: ncu rc=$? at $(($(date +%s) - began)) s"
      ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.sass.csv" 2>&1
      ncu -i "$rep.ncu-rep" --page details >"$rep.details.txt" 2>&1
      python3 scripts/ncu_sass_summary.py "$rep.sass.csv" 60 >"$rep.summary.txt" 2>&1
      grep -E "$wanted" "$rep.details.txt" | sed -E 's/ +/ /g' | cut -c1-110 | head -14
      rm -f "$rep.sass.csv"
    done
    for name in s0_c1 s2_c2; do echo "== $name"; head -40 "$logs/b264_$name.summary.txt"; done
    ;;
  *) echo "unknown step '$step': use ncu" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s26_$step.tgz" "s26_$step" && rm -rf "$logs"
