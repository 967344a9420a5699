#!/usr/bin/env bash
# Device call of the forty-fourth session (2026-12-07), on whatever card comes:
#   fill (default)  per-row splits of two sizes filling one wave (fill 1, deploy.hpp's split_plan)
#                   against one size (fill 0): `tuner bench --trimmed` on the winners' kernel
#                   (BLOCK_T 64, 4 consumer + 2 producer warps, 2 stages, merge 4, schedule 0) at
#                   TARGET_CTAS 0 / 256 x fill 0 / 1, the best of each fill value per batch at
#                   BATCHES (default 32-232, 26 sizes), two rounds, every config checked against
#                   the reference first. Then, in the time left (BUDGET_S, default 560 s), the
#                   correctness matrix's PARTS (default fp8_ds_mla:4: every compile key, with the
#                   fill 1 launch variant on the pipelined per-row-split kernels).
#   sweep           h200_s43.sh's sweep step: the default sweep by .devcarry/bin/tuner_old (here
#                   `scripts/devcarry_old_tuner.sh 434c74c old`: the space before fill) and by this
#                   tree on the same card, then `tuner diff` (logs in $OUT/s43_sweep/).
# Usage: scripts/h200_s44.sh [fill|sweep]   (carry .devcarry; logs in $OUT/s44_STEP/)
set -u
step=${1:-fill}
[ "$step" = sweep ] && exec bash scripts/h200_s43.sh sweep
[ "$step" = fill ] || { echo "unknown step '$step': use fill or sweep" >&2; exit 2; }
source scripts/device_call_env.sh
call_logs s44 "$step"
export XDG_CACHE_HOME=/tmp/s44_cache TUNER_BINARY=$PWD/build/tuner/tuner
where="$winners,merge=4,ctas_per_sm=1,schedule=0,target_ctas=0|256,fill=0|1"
batches=${BATCHES:-32,40,48,56,60,64,66,69,72,76,80,84,88,92,96,100,104,112,120,128,136,144,160,176,200,232}
for round in 1 2; do
  timeout "${LIMIT_S:-200}" build/tuner/tuner bench --batches "$batches" --where "$where" \
    --trimmed --no-default --best-per fill >"$logs/fill_$round.log" 2>&1
  echo "round $round rc=$? at $(($(date +%s) - began)) s"
done
echo "== batch, its best rows' target_ctas / fill, median_us (round 1, then round 2)"
best_rows "$logs/fill_1.log"
best_rows "$logs/fill_2.log"
echo "lines naming a wrong result: $(cat "$logs"/fill_*.log | grep -ciE "wrong")"
matrix_parts "${PARTS:-fp8_ds_mla:4}" "$((${BUDGET_S:-560} - $(date +%s) + began))"
