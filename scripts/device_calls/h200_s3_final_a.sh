#!/usr/bin/env bash
# H200, third session, call A: issue 12's measurements on the merged tree (cold + warm default
# sweep over the 51 cudagraph sizes, the search and bucket oracles: scripts/device_calls/h200_issue12_s3.sh),
# then a --budget-arch sm_120 sweep at 5 batches into the same DB and the reference report of
# both (docs/reference-sweep/).
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
work=/tmp/issue12_s3
export WORK=$work
timeout 500 bash scripts/device_calls/h200_issue12_s3.sh build all >"$out/i12.txt" 2>&1
echo "h200_issue12_s3 rc=$?"
timeout 90 build/tuner/tuner sweep --db "$work/tuned.db" --cache-dir "$work/cache" \
  --budget-arch sm_120 --batches 1,8,32,64,128 >"$work/sweep_sm120.log" 2>&1
echo "sm_120 budget sweep rc=$?"; grep -E "^ +(1|8|32|64|128) " "$work/sweep_sm120.log" | cut -c1-200
mkdir -p "$out/report"
timeout 60 build/tuner/tuner report --db "$work/tuned.db" --out "$out/report" >"$work/report.log" 2>&1
echo "report rc=$?"
cp "$work/sweep_sm120.log" "$work/report.log" "$out/report/" 2>/dev/null
tar -C "$out" -czf "$out/report.tgz" report && rm -rf "$out/report"
cat "$work/summary.txt"
