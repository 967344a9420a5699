#!/usr/bin/env bash
# H200, nineteenth session.
#   sweep   the default sweep cold (fresh cubin cache and DB, target < 120 s), then the same
#           command three times with nothing changed (target < 5 s each): the warm rerun's plan
#           check now reads the latest plan run's digest (plan_run_digests) instead of its
#           ~525,000 rows. Predicted before the run: the warm rerun's plan phase from 5.1 s to
#           ~2 s (record_plan_unless_held: 3.6-4.9 s -> 0.1 s on the 2-core CPU machine).
#   probe   schedule 0 (per-row splits) against schedule 1 (balanced, one wave of resident CTAs)
#           on the winners' structure at batches 64 and 512, merges 0/1/2/4, the fastest launch
#           per schedule, in three fresh processes: what row crossing costs at 64, and whether
#           batch 512's two modes follow the schedule (one wave) or the process.
#   ncu     Nsight Compute (full set, source) on the split and combine kernels of schedule 0 and 1
#           at batches 64 and 512 (merge 4 at 64, merge 1 at 512: each schedule's fastest in
#           `probe`): where schedule 1 loses 4.4 µs at 64 and ~40 µs at 512.
#   clocks  SM clock, power and throttle reasons every 100 ms (nvidia-smi) while `tuner bench` times
#           batch 512's winners alone, then while a one-batch sweep at 512 screens and re-times
#           its finalists interleaved with the default (whose launches take ~1.1 ms there): is
#           the sweep's slower figure at 512 (230 µs against bench's 198-204) the card's clock?
#   modes   batch 512's winner (merge 0, 128 target CTAs) timed by `tuner bench` in 4 fresh
#           processes, each after a different load (none; 5 s of the default's launches, which
#           drive the card into its power cap), with the clock sampled: do the fast and slow
#           modes follow the card's clock?
#   ab      the producers' q handoff at row crossings (q_handoff.cuh) against the tree before it
#           (.devcarry/bin/tuner_old, scripts/devcarry_old_tuner.sh): schedule 1 and 0 on the
#           winners' structure at batches 64, 66, 88, 136, 176 and 272 (schedule 1 won 66-176 and
#           272 in the reference sweep), merges 0 / 1 / 4, the fastest launch per schedule, rounds
#           old / new / old / new. Predicted before the run: schedule 1's split kernel at 64 from
#           35.2 to ~31-32 µs (schedule 0's 31.7 with 3 % fewer tiles a CTA), the launch ~3 µs
#           faster there and at every batch where its CTAs cross rows; schedule 0 unchanged.
#   check   the handoff's correctness: the repeat test (batch 64, every launch variant, results
#           that move between repeats), then the 16-head parts of the correctness matrix
#           (compiled on the device); PARTS="bf16:2" for others.
# Usage: scripts/device_calls/h200_s19.sh sweep|probe|ncu|clocks|modes|ab|check   (carry .devcarry; logs in
# $OUT/s19_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s19.sh sweep|probe|ncu|clocks|modes|ab|check}
source scripts/device_call_env.sh
logs=$out/s19_$step
mkdir -p "$logs"
case $step in
  sweep)
    export WORK=/tmp/s19_sweep
    bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
    cp "$WORK"/cold.log "$WORK"/warm.log "$logs/" 2>/dev/null
    for again in 2 3; do
      t0=$(date +%s.%N)
      timeout 60 build/tuner/tuner sweep --cache-dir "$WORK/cache" --db "$WORK/tuned.db" \
        >"$logs/warm_$again.log" 2>&1
      rc=$?
      echo "warm rerun $again: rc=$rc $(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s;" \
        "$(grep '^time:' "$logs/warm_$again.log" | cut -c1-120)"
    done
    cut -c1-220 "$logs/main.txt" | tail -n 9
    ;;
  probe)
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    for process in 1 2 3; do
      XDG_CACHE_HOME=/tmp/s19_cache timeout 150 build/tuner/tuner bench --batches 64,512 \
        --where "$where,producers=2,merge=0|1|2|4" --no-default --best-per schedule \
        >"$logs/probe_$process.log" 2>&1
      echo "process $process rc=$? at $(($(date +%s) - began)) s"
    done
    for f in "$logs"/probe_*.log; do
      echo "== $(basename "$f") (batch schedule merge target median_us)"
      grep -E "^ +[0-9]+ block_t.*best of" "$f" | awk '{s = ""; m = ""; c = ""; t = "";
        for (i = 2; i <= NF; i++) { if (s == "" && $i ~ /^schedule=/) s = $i;
        if (m == "" && $i ~ /^merge=/) m = $i; if (c == "" && $i ~ /^target_ctas=/) c = $i;
        if (t == "" && $i ~ /^[0-9]+\.[0-9]+$/) t = $i } print $1, s, m, c, t}' | tr '\n' ';'
      echo
    done
    ;;
  ncu)
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    wanted="Duration|DRAM Throughput|Executed Ipc A|Registers Per|Achieved Occupancy|Grid Size"
    for run in 64:4:0:256 64:4:1:256 512:1:0:128 512:1:1:128; do
      IFS=: read -r batch merge schedule ctas <<<"$run"
      rep=$logs/b${batch}_s$schedule
      XDG_CACHE_HOME=/tmp/s19_cache timeout 170 ncu --clock-control none --target-processes all \
        --set full --import-source yes -k regex:'split_pipelined|combine' -c 2 -o "$rep" \
        build/tuner/tuner bench --batches "$batch" --no-default \
        --where "$where,producers=2,merge=$merge,schedule=$schedule,target_ctas=$ctas" \
        >"$rep.run.log" 2>&1
      echo "== batch $batch merge $merge schedule $schedule: ncu rc=$?"
      ncu -i "$rep.ncu-rep" --page details >"$rep.details.txt" 2>&1
      grep -E "^  [a-z_]+.*\(|$wanted" "$rep.details.txt" | sed -E 's/ +/ /g' | cut -c1-100 |
        grep -vE "^ ?(Block|Cluster|Dynamic|Static|Driver|Function|Shared|Threads|Waves)" | head -16
      ncu -i "$rep.ncu-rep" --page source --csv --print-source sass -k regex:split_pipelined \
        >"$rep.sass.csv" 2>&1
      python3 scripts/ncu_sass_summary.py "$rep.sass.csv" 30 >"$rep.summary.txt" 2>&1
      rm -f "$rep.sass.csv" "$rep.ncu-rep"
      [ $(($(date +%s) - began)) -lt 480 ] || { echo "budget: stopped after $run"; break; }
    done
    ;;
  clocks)
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,clocks_throttle_reasons.active \
      --format=csv,noheader,nounits -lms 100 >"$logs/clocks.csv" 2>&1 &
    sampler=$!
    stamp() { while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done; }
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    echo "$(date +%s.%N) bench begins" >"$logs/phases.txt"
    XDG_CACHE_HOME=/tmp/s19_cache timeout 120 build/tuner/tuner bench --batches 512 --no-default \
      --where "$where,producers=2,schedule=0,merge=0|2" --best-per merge >"$logs/bench.log" 2>&1
    echo "bench rc=$?"
    echo "$(date +%s.%N) sweep begins" >>"$logs/phases.txt"
    XDG_CACHE_HOME=/tmp/s19_cache timeout 300 build/tuner/tuner sweep --db /tmp/s19_clocks.db \
      --batches 512 2>&1 | stamp >"$logs/sweep.log"
    echo "sweep rc=${PIPESTATUS[0]}"
    echo "$(date +%s.%N) sweep ends" >>"$logs/phases.txt"
    kill "$sampler"
    grep -E "^ +512 .*best of" "$logs/bench.log" | awk '{print $NF, $(NF-1), $0}' | cut -c1-60
    grep -E " +512 \{" "$logs/sweep.log" | cut -c1-40,200-330
    python3 scripts/clock_phases.py "$logs/clocks.csv" "$logs/phases.txt" "$logs/sweep.log"
    gzip "$logs/sweep.log"
    ;;
  modes)
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,clocks_throttle_reasons.active \
      --format=csv,noheader,nounits -lms 100 >"$logs/clocks.csv" 2>&1 &
    sampler=$!
    winner="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    winner="$winner,producers=2,schedule=0,merge=0,target_ctas=128"
    : >"$logs/phases.txt"
    for run in cold1 hot1 cold2 hot2; do
      if [ "${run#hot}" != "$run" ]; then  # the default config alone, ~5 s of its launches first
        XDG_CACHE_HOME=/tmp/s19_cache timeout 60 build/tuner/tuner bench --batches 256,512 \
          >"$logs/heat_$run.log" 2>&1  # no --where: the default config alone
      else
        sleep 5
      fi
      echo "$(date +%s.%N) $run begins" >>"$logs/phases.txt"
      XDG_CACHE_HOME=/tmp/s19_cache timeout 60 build/tuner/tuner bench --batches 512 --no-default \
        --where "$winner" >"$logs/$run.log" 2>&1
      echo "$(date +%s.%N) $run ends" >>"$logs/phases.txt"
      echo "$run rc=$? $(grep -E '^ +512 ' "$logs/$run.log" | head -n 1 | awk '{print $(NF-10), $(NF-9), $(NF-8), $(NF-3)}')"
    done
    kill "$sampler"
    python3 scripts/clock_phases.py "$logs/clocks.csv" "$logs/phases.txt"
    ;;
  ab)
    source scripts/bench_ab.sh
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    bench_ab "$logs" 64,66,88,136,176,272 "$where,producers=2,merge=0|1|4" schedule || exit 2
    for f in "$logs"/old_1.log "$logs"/new_1.log "$logs"/old_2.log "$logs"/new_2.log; do
      echo "== $(basename "$f") (batch schedule median_us)"
      grep -E "^ +[0-9]+ block_t.*best of" "$f" | awk '{s = ""; t = "";
        for (i = 2; i <= NF; i++) { if (s == "" && $i ~ /^schedule=/) s = $i;
        if (t == "" && $i ~ /^[0-9]+\.[0-9]+$/) t = $i } print $1, s, t}' | tr '\n' ';'
      echo
    done
    ;;
  check)
    source scripts/matrix_check.sh
    matrix_check "$logs" /tmp/s19_cubins "${PARTS:-fp8_ds_mla:4 bf16:4}" 240 "${BUDGET_S:-560}"
    ;;
  *) echo "unknown step '$step': use sweep, probe, ncu, clocks, modes, ab or check" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s19_$step.tgz" "s19_$step" && rm -rf "$logs"
