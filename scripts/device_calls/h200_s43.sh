#!/usr/bin/env bash
# Device call of the forty-third session (2026-12-07), on whatever card comes:
#   scan (default)  where a deeper ring wins. The forty-second session's `h200_s42.sh ring` (H100,
#                   2026-12-07) found four producer warps with 3-4 stages of 64 tokens, one CTA an
#                   SM, schedule 0, 4 % faster than the sweep's 2-stage kernels at batch 92 (56.2
#                   against 58.5 µs, both rounds) and 5-11 % slower at 64, 69, 72 and 128.
#                   `tuner bench --trimmed`: producers 2 and 4 at 2 / 3 / 4 stages (BLOCK_T 64, 4
#                   consumer warps, merge 4, schedule 0, TARGET_CTAS 0 / 128 / 256), best per
#                   (producers, num_stages) at BATCHES (default 40-256, 22 sizes), one round,
#                   every config checked against the reference first. Then, in the time left
#                   (BUDGET_S, default 560 s), the correctness matrix's PARTS (default
#                   fp8_ds_mla:4: every compile key, the tile-dividing four-producer kernels that
#                   take the token softmax since e8e7a98 among them).
#   sweep           the default sweep (fresh cubin cache each) by .devcarry/bin/tuner_old (from
#                   `scripts/devcarry_old_tuner.sh f5256e5 old`: the space before the 3-stage
#                   four-producer ring) and by this tree, one after the other on the same card;
#                   their wall times and `tuner diff` of the two DBs' winners (old first).
# Usage: scripts/device_calls/h200_s43.sh [scan|sweep]   (carry .devcarry; logs in $OUT/s43_STEP/)
set -u
step=${1:-scan}
source scripts/device_call_env.sh
call_logs s43 "$step"
export XDG_CACHE_HOME=/tmp/s43_cache TUNER_BINARY=$PWD/build/tuner/tuner
if [ "$step" = sweep ]; then
  for build in old new; do
    tuner=build/tuner/tuner
    [ "$build" = old ] && tuner=.devcarry/bin/tuner_old
    timeout "${LIMIT_S:-260}" "$tuner" sweep --cache-dir "/tmp/s43_cubins_$build" \
      --db "/tmp/s43_$build.db" >"$logs/sweep_$build.log" 2>&1
    echo "sweep $build rc=$? at $(($(date +%s) - began)) s"  # its wall time: the "time:" line
    grep -E "^(time:|protocol:|run )" "$logs/sweep_$build.log" | cut -c1-160
  done
  build/tuner/tuner diff --db /tmp/s43_old.db --db /tmp/s43_new.db >"$logs/diff.log" 2>&1
  echo "diff rc=$?"
  cut -c1-200 "$logs/diff.log" | tail -n 70
  exit 0
fi
[ "$step" = scan ] || { echo "unknown step '$step': use scan or sweep" >&2; exit 2; }
where="block_t=64,block_h=16,num_warps=4,mma_path=1,kv_unpack=0,merge=4,ctas_per_sm=1,schedule=0"
where="$where,target_ctas=0|128|256,producers=2|4,num_stages=2|3|4"
batches=${BATCHES:-40,48,56,64,72,80,84,88,92,96,100,104,108,112,116,120,124,128,144,160,192,256}
timeout "${LIMIT_S:-330}" build/tuner/tuner bench --batches "$batches" --where "$where" \
  --trimmed --no-default --best-per producers,num_stages >"$logs/scan.log" 2>&1
echo "scan rc=$? at $(($(date +%s) - began)) s"
echo "== batch, its best rows' producers / num_stages / target_ctas / schedule, median_us"
best_rows "$logs/scan.log"
echo "lines naming a wrong result: $(grep -ciE "wrong" "$logs/scan.log")"
matrix_parts "${PARTS:-fp8_ds_mla:4}" "$((${BUDGET_S:-560} - $(date +%s) + began))"
