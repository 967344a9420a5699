#!/usr/bin/env bash
# H200: issue 13's timing case on a swept and frozen DB (batches 1 and 64), the launcher timed
# with the sweep's L2-safe index sets.
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh
out=${OUT:-/tmp/tuner-out}
work=$(mktemp -d)
timeout 100 .devcarry/bin/tuner sweep --db "$work/t.db" --batches 1,64 --cache-dir "$work/c" \
  >"$out/sweep.log" 2>&1 && timeout 40 .devcarry/bin/tuner freeze --db "$work/t.db" \
  --out "$work/f.db" --cache-dir "$work/c" >"$out/freeze.log" 2>&1
echo "sweep+freeze rc=$?"
TUNER_REQUIRE_GPU=1 TUNEDB_SERVE_DB="$work/f.db" TUNER_BINARY=$PWD/.devcarry/bin/tuner timeout 90 \
  .devcarry/bin/gpu_tunedb_cuda --no-skip >"$out/timing.log" 2>&1
echo "gpu_tunedb_cuda --no-skip rc=$?"; grep -E "ratio|test cases|ERROR" "$out/timing.log" | head -8
