#!/usr/bin/env bash
# H200, tenth session (2026-12-02), one call (~8 min): gpu_cuda_driver (its ptxas case failed once,
# now with the NVRTC log), issue 12's round with the batch search's value representatives and the
# default batch set 'cudagraph,waves,clusters' (h200_issue12_s4.sh all: the default sweep cold
# and warm, the search oracle at 14 batches, the bucket oracle at 21), `tuner report` of that
# sweep, then, if time is left, Nsight Compute on schedule 0 against 1 (h200_s10_ncu.sh).
# Usage: BUDGET_S=570 scripts/device_calls/h200_s10.sh   (carry .devcarry; the issue 12 tables are printed last)
source scripts/device_call_env.sh
elapsed() { echo $(($(date +%s) - began)); }
build/tests/gpu_cuda_driver >"$out/gpu_cuda_driver.log" 2>&1
echo "gpu_cuda_driver rc=$? $(grep -E 'test cases' "$out/gpu_cuda_driver.log" | tail -n 1)"
limit=${BUDGET_S:-570}  # this call's seconds (the device tool's timeout_s, less a margin)
for step in main search bucket; do  # one step at a time: a step cut short loses only itself
  left=$((limit - $(elapsed) - 40))
  [ "$left" -gt 60 ] || { echo "$step: not run, $(elapsed) s gone"; continue; }
  timeout "$left" bash scripts/device_calls/h200_issue12_s4.sh build "$step" >"$out/$step.txt" 2>&1
  echo "issue 12 $step rc=$? at $(elapsed) s"
done
build/tuner/tuner report --db /tmp/issue12_s4/tuned.db --out "$out/report_main" >/tmp/report.log 2>&1
echo "report rc=$?"
mkdir -p "$out/report_main" && cp /tmp/report.log "$out/report_main/"
tar -C "$out" -czf "$out/report_main.tgz" report_main && rm -rf "$out/report_main"
if [ "$(elapsed)" -lt $((limit - 100)) ]; then
  timeout $((limit - $(elapsed))) bash "${NCU_SCRIPT:-scripts/device_calls/h200_s10_ncu.sh}" >"$out/ncu.txt" 2>&1
  echo "ncu rc=$? at $(elapsed) s"
else
  echo "ncu: not run, $(elapsed) s gone"
fi
for step in main search bucket; do [ -f "$out/$step.txt" ] && cut -c1-300 "$out/$step.txt"; done
