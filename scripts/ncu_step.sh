# shellcheck shell=bash disable=SC2154  # $began: device_call_env.sh
# Sourced by the H200 call scripts' Nsight Compute steps (bash).
# ncu_step REP BATCH WHERE: ncu's full set with the source page of the first split_pipelined
# launch of `tuner bench` (.devcarry/bin/tuner) at BATCH on the configs WHERE selects, into
# REP.ncu-rep; then REP.details.txt, REP.summary.txt (per-opcode instructions and stall samples,
# scripts/ncu_sass_summary.py) and the headline metrics printed. Expects $began.
ncu_step() {
  local rep=$1 batch=$2 where=$3
  local wanted="Duration|DRAM Throughput|Executed Ipc A|Issue Slots Busy|Executed Instructions |"
  wanted="${wanted}Warp Cycles Per Issued|Registers Per|Achieved Occupancy|L2 Hit Rate|L1/TEX Hit"
  # tuner bench runs the candidates in its worker process: ncu must follow it.
  timeout 160 ncu --clock-control none --target-processes all --set full --import-source yes \
    -k regex:split_pipelined -c 1 -o "$rep" .devcarry/bin/tuner bench --batches "$batch" \
    --no-default --where "$where" >"$rep.run.log" 2>&1
  echo "== $(basename "$rep"): ncu rc=$? at $(($(date +%s) - began)) s"
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.sass.csv" 2>&1
  ncu -i "$rep.ncu-rep" --page details >"$rep.details.txt" 2>&1
  python3 scripts/ncu_sass_summary.py "$rep.sass.csv" 60 >"$rep.summary.txt" 2>&1
  grep -E "$wanted" "$rep.details.txt" | sed -E 's/ +/ /g' | cut -c1-110 | head -14
  rm -f "$rep.sass.csv"
}
