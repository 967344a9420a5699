#!/usr/bin/env bash
# Device call of the forty-second session (2026-12-07), on whatever card comes:
#   ring (default)  four producer warps with a deeper ring, one CTA an SM. The thirty-ninth
#                   session found a lone CTA's 64-token ring cycle to be the copies' issue (~1.4
#                   µs, two producer warps) + their landing (~1.1) + the other tile's compute
#                   (~1.1) over two stages; four producer warps halve the issue, and one CTA an SM
#                   has the shared memory for 3-4 stages of 64 tokens (126-168 KB), which the
#                   sweep trims ("pipelined rings hold 64-128 tokens", measured on two producer
#                   warps) along with four producer warps under the tile-dividing schedules
#                   (which now take the token softmax there, as under the bound of two).
#                   `tuner bench --trimmed`: producers 4 at 2 / 3 / 4 stages against the sweep's
#                   two-producer 2-stage kernel, schedules 0 and 2, TARGET_CTAS 0 / 128 / 256
#                   (one launch under schedule 2), merge 4, best per (producers, stages,
#                   schedule) at BATCHES, two rounds; every config is checked against the
#                   reference first. LIMIT_S: each run's limit (default 250 s); STAGES: the
#                   four-producer kernels' stages (default 2|3|4);
#                   ROUNDS: the rounds (default "1 2").
# Usage: scripts/device_calls/h200_s42.sh [ring]   (carry .devcarry; logs in $OUT/s42_STEP/)
set -u
step=${1:-ring}
source scripts/device_call_env.sh
call_logs s42 "$step"
[ "$step" = ring ] || { echo "unknown step '$step': use ring" >&2; exit 2; }
export XDG_CACHE_HOME=/tmp/s42_cache TUNER_BINARY=$PWD/build/tuner/tuner
structure="block_t=64,block_h=16,num_warps=4,mma_path=1,kv_unpack=0,merge=4,ctas_per_sm=1"
structure="$structure,schedule=0|2,target_ctas=0|128|256"
for round in ${ROUNDS:-1 2}; do
  for build in "producers=4,num_stages=${STAGES:-2|3|4}" "producers=2,num_stages=2"; do
    name=p${build:10:1}_$round
    timeout "${LIMIT_S:-250}" build/tuner/tuner bench --batches "${BATCHES:-64,69,72,92,128}" \
      --where "$structure,$build" --trimmed --no-default \
      --best-per producers,num_stages,schedule >"$logs/$name.log" 2>&1
    echo "$name rc=$? at $(($(date +%s) - began)) s"
  done
done
for round in ${ROUNDS:-1 2}; do
  echo "== round $round (batch, its best rows' producers / num_stages / target_ctas / schedule, median_us)"
  best_rows "$logs"/p?_"$round".log
done
echo "lines naming a wrong result: $(grep -ciE "wrong" "$logs"/*.log | paste -sd ' ')"
