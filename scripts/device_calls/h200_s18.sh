#!/usr/bin/env bash
# H200, eighteenth session.
#   ab    the split launched as a programmatic dependent of the stream's previous kernel (split.cuh's
#         wait_for_inputs; deploy.hpp's split_order) against the tree before it
#         (.devcarry/bin/tuner_old from 220964d, scripts/devcarry_old_tuner.sh). Predicted before
#         the run: the split's launch and CTA start overlap the previous kernel's drain, as merge 1
#         did for the combine (merge 0 -> 1 was ~0.4 µs at batch 1, ~0.7 at 64: section 7's
#         reference sweep), so ~0.3-0.7 µs a launch at every batch, none of it in the tiles. The
#         winners' structure at batches 1-512, merges 1, 2 and 4, the fastest launch per merge,
#         two rounds interleaved old / new / old / new on one machine.
#   gpu   the GPU tests that launch through the serving launcher and graph capture (the frozen
#         cubins, the C client, the repeat test at batch 64): the split's new launch order there.
# Usage: scripts/device_calls/h200_s18.sh ab|gpu   (carry .devcarry; logs in $OUT/s18_STEP.tgz)
step=${1:?usage: scripts/device_calls/h200_s18.sh ab|gpu}
source scripts/device_call_env.sh
logs=$out/s18_$step
mkdir -p "$logs"
case $step in
  ab)
    [ -x .devcarry/bin/tuner_old ] || { echo "no .devcarry/bin/tuner_old" >&2; exit 2; }
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    for round in 1 2; do
      for build in old new; do
        bin=build/tuner/tuner
        [ "$build" = old ] && bin=.devcarry/bin/tuner_old
        log=$logs/${build}_$round.log
        XDG_CACHE_HOME=/tmp/s18_cache_$build timeout 150 $bin bench \
          --batches 1,8,32,64,128,256,512 --where "$where,producers=2,merge=1|2|4" --no-default \
          --best-per merge >"$log" 2>&1
        echo "$build round $round rc=$? at $(($(date +%s) - began)) s"
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
  gpu)
    # The binaries themselves: the carried build is slim (no CPU tests), so its CTest files do not
    # load (the first try, with ctest, stopped there: rc 8, no test run).
    for t in gpu_capture gpu_cuda_driver gpu_tunedb_cuda gpu_tunedb_cuda_factors; do
      timeout 200 "build/tests/$t" >"$logs/$t.log" 2>&1
      echo "$t rc=$? $(grep -E 'test cases' "$logs/$t.log" | tail -n 1)"
    done
    ;;
  *) echo "unknown step '$step': use ab or gpu" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s18_$step.tgz" "s18_$step" && rm -rf "$logs"
