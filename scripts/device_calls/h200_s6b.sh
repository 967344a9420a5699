#!/usr/bin/env bash
# H200, 2026-12-02, second call: the default sweep with the cluster merge swept on the winners'
# kernel only (measured_trim), cold and warm (scripts/device_calls/h200_issue12_s4.sh main: < 120 s, < 5 s),
# gpu_sweep (the plan-digest integrity fix and the batch-2 bound), then the search oracle with
# the time left (h200_issue12_s4.sh search). Carry .devcarry. Logs in $OUT.
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
began=$(date +%s)
export WORK=/tmp/s6b
bash scripts/device_calls/h200_issue12_s4.sh build main >"$out/main.txt" 2>&1
TUNER_REQUIRE_GPU=1 timeout 110 build/tests/gpu_sweep >"$out/gpu_sweep.log" 2>&1
echo "gpu_sweep rc=$? $(grep -E 'test cases' "$out/gpu_sweep.log" | tail -n 1)"
left=$((${BUDGET_S:-300} - $(date +%s) + began))
if [ "$left" -gt 120 ]; then
  timeout "$left" bash scripts/device_calls/h200_issue12_s4.sh build search >"$out/search.txt" 2>&1
  echo "search rc=$? (limit $left s)"; tail -n 6 "$out/search.txt" | cut -c1-200
fi
grep -v "cuModuleUnload\|cuMemFree\|cuStreamDestroy\|^sweep [0-9]" "$out/gpu_sweep.log" >"$out/gpu_sweep_short.log"
rm -f "$out/gpu_sweep.log"
cut -c1-220 "$out/main.txt" | tail -n 9
