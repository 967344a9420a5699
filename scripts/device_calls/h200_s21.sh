#!/usr/bin/env bash
# H200, twenty-first session.
#   probe   one CTA an SM at batch 64 (the twentieth session's suggestion): BLOCK_T 32 / 64, a
#           3-8 stage ring, 4 or 8 consumer warps + 2 producers, 2 splits a row (target_ctas 128:
#           clusters of 2 fit the H200 at batch 64), merge 2 (cluster) or 4 (bf16 partials +
#           programmatic combine), beside the winners' structure (BLOCK_T 64, 4 + 2 warps, 2 stages,
#           2 CTAs an SM) in the same run. Predicted: ~33-35 us at 64 for 8 + 2 warps, merge 2;
#           4 + 2 warps compute-bound (~40 us).
#   modes   batch 512's two modes (~196-204 against ~222-226 us, cause not found): the winners'
#           structure at batches 256 and 512, one split a row (target_ctas 128 / 256) and two
#           (merge 4), with KV caches of 0.5 / 1 / 2 / 4 GiB (--memory-gib: how many distinct
#           rows the launches share and how far the gather spreads) and with an L2 flush between
#           replays instead of input sets; three processes each. A mode tied to the cache size
#           points at the gather's spread (TLB, DRAM pages), one that comes at every size at the
#           launch or the machine.
#   series  the same one-split launch at 512 (and 256) timed replay by replay (`tuner bench
#           --samples`) while nvidia-smi samples clocks, power, temperatures and throttle reasons
#           every 20 ms: do the fast replays come first (a burst before a power or thermal limit)
#           or mixed?
#   sustained  batch 512 (and 256) under sustained load: every config of the winners' family of
#           structures (BLOCK_T 32 / 64, 4 / 8 warps, 2-4 stages, bitwise or cvt unpack, 1 or 2 CTAs
#           an SM bound), one split a row, 40 replays each (the first ~5 run before the card's
#           power cap lowers the SM clock; the median is the capped speed): is there a config
#           that holds its speed better than the burst winner?
#   ab      token softmax (token_softmax.cuh) against the tree before it (.devcarry/bin/tuner_old
#           from 42160a5, scripts/devcarry_old_tuner.sh): the winners' structure (BLOCK_T 64,
#           4 + 2 warps, 2 stages, mma_path 1, schedule 0), merges 1 / 2 / 4, the fastest launch
#           per merge at batches 1-512 (fp8) and 1-128 (bf16), rounds old / new / old / new; then
#           batch 512's one-split launch held for 40 replays (the capped speed) on each build.
#           Predicted before the run: a consumer warp's tile takes 1,018 instructions instead of
#           1,190 (SASS, -14.5 %; 10 MUFU instead of 34) for one more consumer barrier a tile:
#           batch 64 -0.3 to -0.8 us, 128-512 -2 to -5 %, the capped 512 more than the burst.
#   check   correctness: the repeat test and the matrix parts in PARTS, as h200_s20.sh check.
# Usage: scripts/device_calls/h200_s21.sh probe|modes|series|sustained|ab|check   (carry .devcarry; logs in $OUT/s21_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s21.sh probe|modes|series|sustained|ab|check}
source scripts/device_call_env.sh
logs=$out/s21_$step
mkdir -p "$logs"
common="block_h=16,kv_unpack=0,ctas_per_sm=1,mma_path=1,producers=2,schedule=0"
case $step in
  probe)
    bench() {  # NAME BATCHES WHERE BEST_PER
      timeout 200 build/tuner/tuner bench --batches "$2" --trimmed --no-default --where "$3" \
        --best-per "$4" >"$logs/$1.log" 2>&1
      echo "$1 rc=$? at $(($(date +%s) - began)) s"
    }
    base="$common,block_t=64,num_stages=2,num_warps=4,merge=2|4"
    one="$common,block_t=64,num_stages=3|4,num_warps=4|8,merge=2|4,target_ctas=128"
    one32="$common,block_t=32,num_stages=4|6|8,num_warps=8,merge=2|4,target_ctas=128"
    bench base_1 32,64,128 "$base" merge
    bench one_64 32,64,128 "$one" num_warps,num_stages,merge
    bench one_32 64,128 "$one32" num_stages,merge
    bench base_2 32,64,128 "$base" merge
    for f in "$logs"/*.log; do
      echo "== $(basename "$f")"
      grep -E "best of|% copy|wrong|error" "$f" | cut -c1-330
    done
    ;;
  modes)
    where="$common,block_t=64,num_stages=2,num_warps=4,merge=1|4,target_ctas=128|256|512|1024"
    for gib in 1 0.5 2 4 1; do
      for run in 1 2; do
        timeout 100 build/tuner/tuner bench --batches 256,512 --no-default --where "$where" \
          --best-per merge,target_ctas --memory-gib $gib >"$logs/gib${gib}_$run.log" 2>&1
        echo "gib $gib run $run rc=$? at $(($(date +%s) - began)) s"
      done
    done
    timeout 100 build/tuner/tuner bench --batches 256,512 --no-default --where "$where" \
      --best-per merge,target_ctas --l2 flush >"$logs/flush.log" 2>&1
    echo "flush rc=$? at $(($(date +%s) - began)) s"
    for f in "$logs"/*.log; do
      echo "== $(basename "$f") (batch merge target median p10 p90 launchp10 launchp90 MB %copy)"
      grep -E "^ +[0-9]+ block_t.*best of" "$f" | awk '{m = ""; c = "";
        for (i = 2; i <= NF; i++) { if ($i ~ /^merge=/) m = $i; if ($i ~ /^target_ctas=/) c = $i;
          if ($i ~ /^schedule=/) k = i }
        print $1, m, c, $(k+1), $(k+2), $(k+3), $(k+4), $(k+5), $(k+7), $(k+8)}'
    done
    ;;
  series)
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,clocks_throttle_reasons.active \
      --format=csv,noheader,nounits -lms 20 >"$logs/clocks.csv" 2>&1 &
    sampler=$!
    base="$common,block_t=64,num_stages=2,num_warps=4"
    # NAME BATCH WHERE REPLAYS: one long run of one launch, replay by replay
    long_run() {
      sleep 2
      echo "$(date +%s.%N) $1" >>"$logs/phases.txt"
      timeout 100 build/tuner/tuner bench --batches "$2" --no-default --where "$3" --replays "$4" \
        --samples "$logs/samples_$1.csv" >"$logs/bench_$1.log" 2>&1
      echo "$1 rc=$? at $(($(date +%s) - began)) s"
    }
    long_run b512 512 "$base,merge=1,target_ctas=128" 60
    long_run b64 64 "$base,merge=4,target_ctas=256" 300
    long_run b128 128 "$base,merge=2,target_ctas=1024" 150
    long_run b512again 512 "$base,merge=1,target_ctas=128" 60
    for rest in 2 2; do
      python3 scripts/copy_series.py --ms 500 --rest $rest >>"$logs/copy_series.txt" 2>&1
    done
    kill "$sampler"
    cat "$logs/copy_series.txt"
    for name in b512 b64 b128 b512again; do
      echo "== $name: median us a launch per window of 10 replays, in order"
      python3 -c 'import csv, statistics, sys
rows = [float(r[-1]) for r in csv.reader(open(sys.argv[1]))]
print(" ".join("%.1f" % statistics.median(rows[i:i + 10]) for i in range(0, len(rows), 10)))' \
        "$logs/samples_$name.csv"
    done
    awk -F, '$4 > 300 {n++; p += $4; if ($4 > m) m = $4} END {print n, "samples over 300 W, mean", p / n, "max", m}' "$logs/clocks.csv"
    awk -F, '$4 > 300 {print $2, $3, $7}' "$logs/clocks.csv" | sort | uniq -c | sort -rn | head -8
    nvidia-smi -q -d POWER,PERFORMANCE | grep -iE "limit|slowdown|cap|throttle" | head -20
    ;;
  sustained)
    where="block_h=16,mma_path=1,producers=2,schedule=0,merge=1,target_ctas=128"
    where="$where,block_t=32|64,num_warps=4|8,num_stages=2|3|4,kv_unpack=0|1,ctas_per_sm=1|2"
    timeout 400 build/tuner/tuner bench --batches 512,256 --trimmed --no-default --where "$where" \
      --replays 40 --top 12 --samples "$logs/samples.csv" >"$logs/bench.log" 2>&1
    echo "bench rc=$? at $(($(date +%s) - began)) s"
    grep -E "fastest|^ +(512|256) block" "$logs/bench.log" | head -30 | cut -c1-250
    python3 -c 'import csv, statistics, sys
runs = {}
for batch, config, index, us in csv.reader(open(sys.argv[1])):
    runs.setdefault((batch, config), []).append(float(us))
rows = sorted((b, statistics.median(v[:5]), statistics.median(v[10:]), c) for (b, c), v in runs.items())
for b, burst, held, c in rows: print(b, "%.1f %.1f" % (burst, held), c)' "$logs/samples.csv" | sort -k1,1n -k3,3n | head -40
    ;;
  ab)
    [ -x .devcarry/bin/tuner_old ] || { echo "no .devcarry/bin/tuner_old" >&2; exit 2; }
    where="$common,block_t=64,num_stages=2,num_warps=4"
    for round in 1 2; do
      for build in old new; do
        bin=build/tuner/tuner
        [ "$build" = old ] && bin=.devcarry/bin/tuner_old
        export XDG_CACHE_HOME=/tmp/ab_cache_$build
        timeout 150 $bin bench --batches 1,8,32,64,128,256,512 --where "$where,merge=1|2|4" \
          --no-default --best-per merge >"$logs/${build}_fp8_$round.log" 2>&1
        timeout 100 $bin bench --kv bf16 --batches 1,32,64,128 --where "$where,merge=1|2|4" \
          --no-default --best-per merge >"$logs/${build}_bf16_$round.log" 2>&1
        echo "$build round $round rc=$? at $(($(date +%s) - began)) s"
      done
    done
    for build in old new; do
      bin=build/tuner/tuner
      [ "$build" = old ] && bin=.devcarry/bin/tuner_old
      XDG_CACHE_HOME=/tmp/ab_cache_$build timeout 60 $bin bench --batches 512 \
        --where "$where,merge=1,target_ctas=128" --no-default --replays 40 \
        --samples "$logs/held_$build.csv" >"$logs/held_$build.log" 2>&1
    done
    for f in "$logs"/old_fp8_1.log "$logs"/new_fp8_1.log "$logs"/old_fp8_2.log "$logs"/new_fp8_2.log \
      "$logs"/old_bf16_1.log "$logs"/new_bf16_1.log "$logs"/old_bf16_2.log "$logs"/new_bf16_2.log; do
      echo "== $(basename "$f") (batch merge median)"
      grep -E "^ +[0-9]+ block_t.*best of" "$f" | awk '{m = "";
        for (i = 2; i <= NF; i++) { if ($i ~ /^merge=/) m = $i; if ($i ~ /^schedule=/) k = i }
        printf "%s %s %s; ", $1, m, $(k + 1)}'
      echo
    done
    for build in old new; do
      echo "== held 512, $build: median of replays 1-5, 11-40"
      python3 -c 'import csv, statistics, sys
v = [float(r[-1]) for r in csv.reader(open(sys.argv[1]))]
print("%.1f %.1f" % (statistics.median(v[:5]), statistics.median(v[10:])))' "$logs/held_$build.csv"
    done
    grep -hE "WRONG|error" "$logs"/*.log | head -n 10 | cut -c1-300
    ;;
  check)
    source scripts/matrix_check.sh
    matrix_check "$logs" /tmp/s21_cubins "${PARTS:-fp8_ds_mla:4 bf16:4}" "${REPEAT_S:-300}" "${BUDGET_S:-560}"
    ;;
  *) echo "unknown step '$step': use probe, modes, series, sustained, ab or check" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s21_$step.tgz" "s21_$step" && rm -rf "$logs"
