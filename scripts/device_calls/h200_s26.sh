#!/usr/bin/env bash
# H200 steps of the twenty-sixth session (2026-12-05).
#   ncu   where the tile-dividing kernel loses 6-7 % to schedule 0's at equal division: batch 264
#         on the H200 (264 resident CTAs) is one whole row a CTA under both schedule 0 (one split
#         a row) and schedule 2 (W = 1, no tail, no combine), yet the twenty-fifth session timed
#         97 against 104 us. Nsight Compute's full set with the source page for schedule 0
#         (1-CTA bound, the sweep's) and schedule 2 under both bounds (token softmax under 2,
#         whole-tile softmax under 1): per-opcode executed instructions and stall samples
#         (scripts/ncu_sass_summary.py) and the details pages.
#   ab    the producers' token ids staged two tiles ahead by cp.async against the ids loaded into
#         registers a tile ahead. Builds (AB_BUILDS, default "old new"): old = e5cf0ee (registers
#         everywhere; scripts/devcarry_old_tuner.sh e5cf0ee old), v3 = ce675e3 (staged
#         everywhere, read after the stage's wait; ... ce675e3 v3), new = this tree (staged for
#         the tile-dividing schedules and bf16, read before the wait; fp8 schedule 0 in
#         registers). First gpu_sparse_mla_whole_rows on the new build; then tuner bench, two
#         rounds of every build, on the fp8 winners' structure (BLOCK_T 64, 4 + 2 warps, 2
#         stages) at BATCHES (best launch per schedule and bound), bf16's (BLOCK_T 32, 3
#         stages) in one round, and batch 512's one-split launch held for 40 replays (the power
#         cap's speed: replays 11-40). Call 2 (old new = ce675e3): schedule 2 2-3 % faster at
#         264-432 and 1-4 % slower at 64-72, schedule 0 level to 1 % slower, bf16 11-18 % faster.
#         Predicted for this tree: schedule 0 as old; schedule 2 at least v3's.
# Usage: scripts/device_calls/h200_s26.sh ncu|ab   (carry .devcarry; logs in $OUT/s26_STEP.tgz; summary last)
step=${1:?usage: scripts/device_calls/h200_s26.sh ncu|ab}
source scripts/device_call_env.sh
logs=$out/s26_$step
mkdir -p "$logs"
base="block_h=16,block_t=64,num_stages=2,kv_unpack=0,mma_path=1,num_warps=4,producers=2"
base="$base,merge=1,target_ctas=128"
case $step in
  ncu)
    source scripts/ncu_step.sh
    for variant in s0_c1:schedule=0,ctas_per_sm=1 s2_c2:schedule=2,ctas_per_sm=2 \
      s2_c1:schedule=2,ctas_per_sm=1; do
      name=${variant%%:*}
      ncu_step "$logs/b264_$name" 264 "$base,${variant#*:}"
    done
    for name in s0_c1 s2_c2; do echo "== $name"; head -40 "$logs/b264_$name.summary.txt"; done
    ;;
  ab)
    timeout 200 build/tests/gpu_sparse_mla_whole_rows >"$logs/whole_rows.log" 2>&1
    echo "gpu_sparse_mla_whole_rows rc=$? at $(($(date +%s) - began)) s" \
      "$(grep -hE '^\[doctest\] (test cases|assertions)' "$logs/whole_rows.log" | tr -s ' ' |
        paste -sd ' ')"
    source scripts/bench_ab.sh
    mkdir -p "$logs/fp8"
    fp8="${base/producers=2,merge=1,target_ctas=128/producers=2},ctas_per_sm=1|2,schedule=0|2"
    bench_ab "$logs/fp8" "${BATCHES:-64,66,72,128,264,272,336,400,432}" \
      "$fp8,merge=1|4,target_ctas=128|1024" schedule,ctas_per_sm
    bench_ab_summary "$logs/fp8" schedule ctas_per_sm merge
    for build in ${AB_BUILDS:-old new}; do
      bin=$(ab_tuner "$build")
      XDG_CACHE_HOME=/tmp/bench_ab_cache_$build timeout 100 "$bin" bench --kv bf16 \
        --batches 64,128,264,400 --no-default --best-per schedule \
        --where "${fp8/block_t=64,num_stages=2/block_t=32,num_stages=3},merge=1|4,target_ctas=128|1024" \
        >"$logs/bf16_$build.log" 2>&1
      echo "bf16 $build rc=$? at $(($(date +%s) - began)) s"
    done
    for round in 1 2; do
      for build in ${AB_BUILDS:-old new}; do
        bin=$(ab_tuner "$build")
        XDG_CACHE_HOME=/tmp/bench_ab_cache_$build timeout 60 "$bin" bench --batches 512 \
          --where "$base,ctas_per_sm=1,schedule=0" --no-default --replays 40 \
          --samples "$logs/held_${build}_$round.csv" >"$logs/held_${build}_$round.log" 2>&1
      done
    done
    for f in "$logs"/bf16_*.log; do
      echo "== $(basename "$f") (batch schedule median)"
      grep -E "^ +[0-9]+ block_t.*best of" "$f" | awk '{s = ""; u = ""
        for (i = 2; i <= NF; i++) { if ($i ~ /^schedule=/) s = $i; if (u == "" && $i ~ /^[0-9]+\.[0-9]+$/) u = $i }
        printf "%s %s %s; ", $1, s, u}'
      echo
    done
    for round in 1 2; do
      for build in ${AB_BUILDS:-old new}; do
        echo "== held 512 ($build, round $round): median of replays 1-5, 11-40"
        python3 -c 'import csv, statistics, sys
v = [float(r[-1]) for r in csv.reader(open(sys.argv[1]))]
print("%.1f %.1f" % (statistics.median(v[:5]), statistics.median(v[10:])))' \
          "$logs/held_${build}_$round.csv"
      done
    done
    grep -hE "WRONG|wrong_result|error|FAIL" "$logs"/*.log "$logs"/fp8/*.log | head -n 10 | cut -c1-300
    ;;
  *) echo "unknown step '$step': use ncu or ab" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s26_$step.tgz" "s26_$step" && rm -rf "$logs"
