#!/usr/bin/env bash
# H200, after merging issues 9 and 11-14: the launcher test (issue 13); the default sweep over
# every CUDA-graph batch size, cold and warm, and the search's regret against an oracle at 12
# batches (issue 12); the report of that sweep (issue 9's reference report).
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh
out=${OUT:-/tmp/tuner-out}
TUNER_REQUIRE_GPU=1 TUNER_BINARY=$PWD/.devcarry/bin/tuner timeout 70 .devcarry/bin/gpu_tunedb_cuda \
  >"$out/i13_gpu_tunedb_cuda.log" 2>&1
echo "gpu_tunedb_cuda rc=$?"; grep -E "test cases|assertions|ERROR|ratio" "$out/i13_gpu_tunedb_cuda.log" | head -8
timeout 270 bash scripts/device_calls/h200_issue12.sh build main >"$out/i12_main.txt" 2>&1
echo "h200_issue12 main rc=$?"; tail -5 "$out/i12_main.txt"
timeout 40 .devcarry/bin/tuner report --db "$out/issue12_tuning.db" --out "$out/report" >"$out/report.log" 2>&1
echo "report rc=$?"
timeout 190 bash scripts/device_calls/h200_issue12.sh build audit >"$out/i12_audit.txt" 2>&1
echo "h200_issue12 audit rc=$?"; tail -5 "$out/i12_audit.txt"
rm -rf "$out/issue12_cache" "$out"/*.db "$out"/*.db-*
