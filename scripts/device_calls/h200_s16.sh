#!/usr/bin/env bash
# H200, planned in the fifteenth session (no device time was left for it):
#   fixed    where batch 64's cost that does not scale with the tiles goes. The winners' structure
#            (BLOCK_T 64, 4 + 2 warps, 2 stages, mma_path 1) at batch 64 with the CTA count held
#            (target_ctas 256: 4 splits a row; 128: 2) and topk 256 ... 4096, so each CTA runs
#            1, 2, 4, 8, 16 tiles (256 CTAs); merge 1 (combine, programmatic) and merge 0 (combine,
#            stream-ordered). The intercept of µs over tiles per CTA is the fixed cost, the slope a
#            tile's; merge 0 - merge 1 is what the programmatic launch hides of the combine.
#            Then the corner cases on this tree (merge 3's code is inside the split kernel).
#   ab       whether merge 3's code in the split kernel costs the launches that do not use it: the
#            tuner before merge 3 (.devcarry/bin/tuner_old from `scripts/devcarry_old_tuner.sh
#            e688c58`) against this one, rounds old/new/old/new, winners' structure, merge 1 | 2,
#            batches 1-128. (The fifteenth session read 10.58 µs at batch 1 against 10.10-10.14 in
#            the fourteenth, on another machine: not attributed.)
# The correctness matrix rows still owed (fp8, 64 heads), in two calls: `BUDGET_S=560
# scripts/device_calls/h200_s15.sh matrix fp8_ds_mla:1@128` and `... fp8_ds_mla:1@1,7`. In the fifteenth
# session that part ran 453 s for its compile (2,068 keys), the three batch-64 rows (7,272 checks
# each) and 2,931 checks of the first batch-128 row; where the time goes (the compile, the
# reference per compile key, the module loads) was not measured.
#   clusters (added in the sixteenth session, after `fixed` put ~16 µs of batch 64's 37.4 in a
#            fixed part and the partials' 16 MB of traffic in it): why merge 2 (the cluster merge,
#            no partials in global memory) wins at batch 128 (55.3 against 60.4 µs) and loses at
#            64 (39.0, from 8 splits; 4 splits slower still). Every target_ctas x merge 1 | 2 at
#            batches 32, 64, 128 (bench prints only the fastest launch per batch), then Nsight
#            Compute's launch and occupancy figures (the most clusters resident at once, waves,
#            duration) for merge 2 at target_ctas 256 and 512 (both launched 3 splits: the plan's
#            one-wave cap on clusters) and the split and combine kernels' durations under merge 1,
#            at batch 64.
#   partials (added after `clusters`): merge 4 (bf16 partials, the programmatic combine) against
#            merges 1 and 2 on the winners' structure, batches 1-512, every target_ctas, two
#            rounds, the fastest launch per merge value. Predicted before the run: batch 64
#            37.1 -> ~35 us (8 of the 16 MB of partial traffic gone), 256 ~ -3 us, 8 and 32
#            ~ -0.5 to -1, 512 unchanged (one split a row).
# Usage: scripts/device_calls/h200_s16.sh fixed|ab|clusters|partials   (carry .devcarry; logs in $OUT/s16_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s16.sh fixed|ab|clusters|partials}
source scripts/device_call_env.sh
logs=$out/s16_$step
mkdir -p "$logs"

case $step in
  fixed)
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    where="$where,producers=2,schedule=0"
    for target in 256 128; do
      for topk in 256 512 1024 2048 4096; do
        log=$logs/t${target}_k$topk.log
        XDG_CACHE_HOME=/tmp/s16_cache timeout 60 build/tuner/tuner bench --batches 64 \
          --topk "$topk" --where "$where,target_ctas=$target,merge=0|1" --no-default \
          --best-per merge >"$log" 2>&1
        echo "target $target topk $topk rc=$? $(grep -E '\(best of merge' "$log" |
          awk '{for (i = 2; i <= NF; i++) if ($i ~ /^merge=/) m = $i;
                for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) {print m, $i; break}}' |
          tr '\n' ' ')"
      done
    done
    TUNER_GPU_MATRIX=fp8_ds_mla:4 timeout 90 build/tests/gpu_sparse_mla_decode \
      -tce="every config*" >"$logs/corners.log" 2>&1
    echo "corners rc=$? $(grep -E 'test cases' "$logs/corners.log" | tail -n 1)"
    ;;
  ab)
    [ -x .devcarry/bin/tuner_old ] || { echo "no .devcarry/bin/tuner_old" >&2; exit 2; }
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    for round in 1 2; do
      for build in old new; do
        bin=build/tuner/tuner
        [ "$build" = old ] && bin=.devcarry/bin/tuner_old
        log=$logs/${build}_$round.log
        XDG_CACHE_HOME=/tmp/s16_cache_$build timeout 100 $bin bench --batches 1,8,32,64,128 \
          --where "$where,producers=2,merge=1|2" --no-default >"$log" 2>&1
        echo "$build round $round rc=$? $(grep -E '\(fastest\)' "$log" |
          awk '{for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) {print $1, $i; break}}' |
          tr '\n' ' ')"
      done
    done
    ;;
  clusters)
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    where="$where,producers=2,schedule=0"
    XDG_CACHE_HOME=/tmp/s16_cache timeout 150 build/tuner/tuner bench --batches 32,64,128 \
      --where "$where,target_ctas=128|256|512|1024,merge=1|2" --no-default >"$logs/bench.log" 2>&1
    echo "bench rc=$?"
    for topk in 1024 4096; do
      XDG_CACHE_HOME=/tmp/s16_cache timeout 60 build/tuner/tuner bench --batches 64 --topk $topk \
        --where "$where,target_ctas=256|512,merge=1|2" --no-default >"$logs/bench_k$topk.log" 2>&1
      echo "bench topk $topk rc=$?"
    done
    for f in "$logs"/bench*.log; do
      echo "== $(basename "$f") (target_ctas merge batch median_us)"
      grep -E "^ +[0-9]+ block_t" "$f" |
        awk '{for (i = 2; i <= NF; i++) if ($i ~ /^(target_ctas|merge)=/) printf "%s ", $i;
              for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) {print $1, $i; break}}' |
        tr '\n' ';'
      echo
    done
    wanted="Duration|Grid Size|Cluster Size|Max Active Clusters|Cluster Occupancy|Waves Per SM|"
    wanted="${wanted}DRAM Throughput|Achieved Occupancy|Block Limit (Registers|Shared)"
    for run in "2 256 split_pipelined 1" "2 512 split_pipelined 1" "1 256 split_pipelined|combine 6"; do
      read -r merge target kernels count <<<"$run"
      log=$logs/ncu_m${merge}_t$target.log
      # tuner bench times in its worker process: ncu must follow it.
      XDG_CACHE_HOME=/tmp/s16_cache timeout 90 ncu --clock-control none --target-processes all \
        -k "regex:$kernels" -c "$count" --section SpeedOfLight --section Occupancy \
        --section LaunchStats build/tuner/tuner bench --batches 64 \
        --where "$where,target_ctas=$target,merge=$merge" --no-default >"$log" 2>&1
      echo "== ncu merge $merge target_ctas $target: rc=$?"
      grep -E "^  [a-z_]+.*\(|$wanted" "$log" | sed -E 's/ +/ /g' | cut -c1-100 | head -40
    done
    ;;
  partials)
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    for round in 1 2; do
      XDG_CACHE_HOME=/tmp/s16_cache timeout 120 build/tuner/tuner bench \
        --batches 1,8,32,64,128,256,512 --where "$where,producers=2,merge=1|2|4" --no-default \
        --best-per merge >"$logs/bench_$round.log" 2>&1
      echo "round $round rc=$? (batch merge median_us)"
      grep -E '\(best of merge' "$logs/bench_$round.log" |
        awk '{for (i = 2; i <= NF; i++) if ($i ~ /^merge=/) m = $i;
              for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) {print $1, m, $i; break}}' |
        tr '\n' ';'
      echo
    done
    ;;
  *) echo "unknown step '$step': use fixed, ab, clusters or partials" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s16_$step.tgz" "s16_$step" && rm -rf "$logs"
