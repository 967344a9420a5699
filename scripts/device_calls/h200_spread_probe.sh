#!/usr/bin/env bash
# H200: is the batch-256/512 spread of the sparse MLA decode winners per process (where the
# buffers landed) or per launch? The eleventh session saw the fastest schedule-0 launch at 512 run
# 193.2 us in one `tuner bench` process and 199-225 us in five others of the same build, with
# replays inside each process within 0.2 % (BENCHMARKS.md section 7, eleventh session). This
# probe times one fixed config at 64 (for contrast), 256 and 512 in ROUNDS fresh processes for
# each KV footprint (--memory-gib 1: the sweep's; 4: four times the pages, the same gathers per
# launch) and prints
# each process's median, replay p10/p90 and per-launch p10/p90, with nvidia-smi's clocks, power and
# throttle reasons sampled every 100 ms (is the slow mode a clock that dropped under sustained load?).
# Usage: ROUNDS=6 scripts/device_calls/h200_spread_probe.sh   (carry .devcarry; ~8 s per process)
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
export TUNER_REQUIRE_GPU=1
out=${OUT:-/tmp/tuner-out}
logs=$out/spread
mkdir -p "$logs"
where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
where="$where,producers=2,merge=1,target_ctas=128,schedule=0"
# The clocks, power and throttle reasons every 100 ms, to set each process's time against.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,\
clocks_event_reasons.active --format=csv -lms 100 >"$logs/smi.csv" 2>&1 &
smi=$!
for gib in 1 4; do
  for round in $(seq "${ROUNDS:-6}"); do
    log=$logs/gib${gib}_$round.log
    timeout 60 build/tuner/tuner bench --batches 64,256,512 --memory-gib "$gib" --where "$where" \
      --no-default >"$log" 2>&1
    echo "memory ${gib} GiB, process $round (rc=$?, ended $(date +%T.%N | cut -c1-12)):" \
      "$(grep -E '^ +(64|256|512) ' "$log" | awk '{for (i = 1; i <= NF; ++i) if ($i ~ /^schedule=/) \
        printf "b%s %s [%s-%s] launches [%s-%s]; ", $1, $(i+1), $(i+2), $(i+3), $(i+4), $(i+5)}')"
  done
done
kill "$smi" 2>/dev/null
echo "SM clock (MHz) min/median/max over the probe and the throttle reasons seen:"
python3 - "$logs/smi.csv" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r and r[0][:2].isdigit()]
clocks = [float(r[1].split()[0]) for r in rows if r[1].strip().split()[0].replace('.', '').isdigit()]
if clocks:
    print(f"  {min(clocks):.0f} / {statistics.median(clocks):.0f} / {max(clocks):.0f} over {len(clocks)} samples;"
          f" reasons {sorted(set(r[5].strip() for r in rows))}")
PY
tar -C "$out" -czf "$out/spread.tgz" spread && rm -rf "$logs"
