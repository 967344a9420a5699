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
#   check   correctness: the repeat test and the matrix parts in PARTS, as h200_s20.sh check.
# Usage: scripts/h200_s21.sh probe|modes|series|check   (carry .devcarry; logs in $OUT/s21_STEP.tgz)
step=${1:?usage: scripts/h200_s21.sh probe|modes|series|check}
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
  check)
    source scripts/matrix_check.sh
    matrix_check "$logs" /tmp/s21_cubins "${PARTS:-fp8_ds_mla:4 bf16:4}" "${REPEAT_S:-300}" "${BUDGET_S:-560}"
    ;;
  *) echo "unknown step '$step': use probe, modes, series or check" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s21_$step.tgz" "s21_$step" && rm -rf "$logs"
