#!/usr/bin/env bash
# H200, planned in the sixteenth session (no device time was left for it):
#   fixed_ncu  where batch 64's ~12 µs of fixed cost inside the split kernel goes (BENCHMARKS.md
#              section 7, sixteenth session: the tiles stream at 97 % of copy bandwidth with two
#              CTAs an SM, and the part that does not scale with them is ~16 µs, ~4 of it the
#              combine). Nsight Compute's full set with the source page on the winners' split
#              kernel (BLOCK_T 64, 4 + 2 warps, 2 stages, mma_path 1, merge 4, target_ctas 256) at
#              batch 64 with topk 256 (one tile a CTA: nearly all of it fixed cost) and 2048 (eight):
#              per-opcode instructions and stall samples and the hottest SASS lines
#              (scripts/ncu_sass_summary.py), duration, DRAM throughput, and the warp states. The
#              difference between the two summaries is the seven tiles; what the one-tile launch
#              spends beyond one tile is the fixed part's content.
# The matrix still owed (merge 4 at 32 and 64 heads; the reference, rewritten in the sixteenth
# session, checked against the CPU fp64 one first): `BUDGET_S=560 bash scripts/device_calls/h200_s15.sh matrix
# fp8_ds_mla:2 bf16:2 bf16:1`, then `... matrix fp8_ds_mla:1` (one or two calls). The reference
# sweep with merge 4: `BUDGET_S=585 timeout 595 bash scripts/device_calls/h200_s9.sh a`.
#   ab         the combine's reads in one trip to L2 (combine.cuh's load_batch: the first batch of
#              partials loaded with the lse values, before the weights) against the tree before it
#              (.devcarry/bin/tuner_old from 5a77137, scripts/devcarry_old_tuner.sh): the winners'
#              structure at batches 1-128, merges 1 and 4, fastest launch per merge, two rounds
#              interleaved on one machine.
#   sweep      the reference sweep with merge 4 (372 sm_90 survivors): the default fp8 sweep cold
#              and warm (h200_issue12_s4.sh main: its time against the 120 s target), the
#              --budget-arch sm_120 sweep (200 s at most: it stopped at 170 s, batch 400, in the
#              twenty-eighth session) and the bf16 sweep into the same DB, `tuner report` of it
#              (docs/reference-sweep); the DB comes back as $OUT/reference-sweep.sqlite.gz.
# Usage: scripts/device_calls/h200_s17.sh fixed_ncu|ab|sweep   (carry .devcarry; logs in $OUT/s17_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s17.sh fixed_ncu|ab|sweep}
source scripts/device_call_env.sh
logs=$out/s17_$step
mkdir -p "$logs"

case $step in
  fixed_ncu)
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    where="$where,producers=2,schedule=0,merge=4,target_ctas=256"
    wanted="Duration|DRAM Throughput|Executed Ipc A|Issue Slots Busy|Executed Instructions |"
    wanted="${wanted}Warp Cycles Per Issued|Registers Per|Achieved Occupancy|L2 Hit Rate"
    for topk in 256 2048; do
      rep=$logs/b64_k$topk
      # tuner bench times in its worker process: ncu must follow it.
      XDG_CACHE_HOME=/tmp/s17_cache timeout 150 ncu --clock-control none --target-processes all \
        --set full --import-source yes -k regex:split_pipelined -c 1 -o "$rep" \
        build/tuner/tuner bench --batches 64 --topk "$topk" --where "$where" --no-default \
        >"$rep.run.log" 2>&1
      echo "== topk $topk: ncu rc=$?"
      ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.sass.csv" 2>&1
      ncu -i "$rep.ncu-rep" --page details >"$rep.details.txt" 2>&1
      python3 scripts/ncu_sass_summary.py "$rep.sass.csv" 40 >"$rep.summary.txt" 2>&1
      grep -E "$wanted" "$rep.details.txt" | sed -E 's/ +/ /g' | cut -c1-110 | head -14
      rm -f "$rep.sass.csv" "$rep.ncu-rep"
    done
    for topk in 256 2048; do echo "== topk $topk"; head -30 "$logs/b64_k$topk.summary.txt"; done
    ;;
  ab)
    [ -x .devcarry/bin/tuner_old ] || { echo "no .devcarry/bin/tuner_old" >&2; exit 2; }
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    for round in 1 2; do
      for build in old new; do
        bin=build/tuner/tuner
        [ "$build" = old ] && bin=.devcarry/bin/tuner_old
        log=$logs/${build}_$round.log
        XDG_CACHE_HOME=/tmp/s17_cache_$build timeout 100 $bin bench --batches 1,8,32,64,128 \
          --where "$where,producers=2,merge=1|4" --no-default --best-per merge >"$log" 2>&1
        echo "$build round $round rc=$?"
      done
    done
    for f in "$logs"/*_1.log "$logs"/*_2.log; do
      echo "== $(basename "$f") (batch merge median_us)"
      grep -E "^ +[0-9]+ block_t.*best of" "$f" | awk '{m = ""; t = ""; for (i = 2; i <= NF; i++) {
        if (m == "" && $i ~ /^merge=/) m = $i; if (t == "" && $i ~ /^[0-9]+\.[0-9]+$/) t = $i }
        print $1, m, t}' | tr '\n' ';'
      echo
    done
    ;;
  sweep)
    export WORK=/tmp/s17_sweep
    mkdir -p "$WORK"
    tuner=build/tuner/tuner
    left() { echo $((${BUDGET_S:-570} - $(date +%s) + began)); }
    bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
    cp "$WORK"/cold.log "$WORK"/warm.log "$logs/" 2>/dev/null
    timeout 200 $tuner sweep --db "$WORK/tuned.db" --cache-dir "$WORK/cache" --budget-arch sm_120 \
      >"$logs/sweep_sm120.log" 2>&1
    echo "sm_120-budget sweep rc=$?"; grep -E "^time:|^run " "$logs/sweep_sm120.log" | cut -c1-200
    l=$(left)
    timeout $((l > 150 ? 150 : l - 15)) $tuner sweep --db "$WORK/tuned.db" --cache-dir \
      "$WORK/cache" --kv bf16 --batches 1,8,32,64,128,256,512 >"$logs/sweep_bf16.log" 2>&1
    echo "bf16 sweep rc=$?"; grep -E "^time:|^run " "$logs/sweep_bf16.log" | cut -c1-200
    $tuner report --db "$WORK/tuned.db" --out "$logs/reference-sweep" >"$logs/report.log" 2>&1
    echo "report rc=$?"
    gzip -c "$WORK/tuned.db" >"$out/reference-sweep.sqlite.gz"
    cut -c1-220 "$logs/main.txt" | tail -n 9
    ;;
  *) echo "unknown step '$step': use fixed_ncu, ab or sweep" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s17_$step.tgz" "s17_$step" && rm -rf "$logs"
