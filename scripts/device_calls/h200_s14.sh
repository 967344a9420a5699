#!/usr/bin/env bash
# H200, owed from the thirteenth session (the stage-release fence, 4eda912, never ran on a GPU):
#   a  the repeat test on the fenced kernel: the fp8 16-head part with 40 repeats, then the 32-head
#      part with 8 (before the fence one key moved in each: BENCHMARKS.md section 7, thirteenth
#      session); 0 moved is the pass; then the corner cases;
#   b  the fence's cost: the unfenced build (.devcarry/bin/tuner_old from
#      scripts/devcarry_old_tuner.sh 7cb3c20) against this one on the winners' structure, rounds
#      old/new/old/new at batches 1-512 (the fence waits for a warp's loads before each stage
#      release: predicted under 1 %).
#   Part a ends with one old/new round of b when the budget leaves 220 s for it.
# Usage: BUDGET_S=560 scripts/device_calls/h200_s14.sh a|b   (carry .devcarry; logs in $OUT/s14_PART)
part=${1:?usage: scripts/device_calls/h200_s14.sh a|b}
source scripts/device_call_env.sh
logs=$out/s14_$part
mkdir -p "$logs"
left() { echo $((${BUDGET_S:-560} - $(date +%s) + began)); }

repeat() {  # repeat PART REPEATS
  local name=${1//:/_}
  TUNER_GPU_MATRIX=$1 TUNER_GPU_REPEATS=$2 TUNER_GPU_LOG=$logs/moved_$name.log \
    timeout "$(($(left) - 30))" build/tests/gpu_sparse_mla_repeat >"$logs/repeat_$name.log" 2>&1
  echo "repeat $1 x$2 rc=$? at $(($(date +%s) - began)) s:" \
    "$(grep -E '^fp8_ds_mla ' "$logs/repeat_$name.log" | tr -s ' ')"
}

bench() {  # bench old|new ROUND
  local bin=build/tuner/tuner
  [ "$1" = old ] && bin=.devcarry/bin/tuner_old
  local where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1"
  XDG_CACHE_HOME=/tmp/s14_cache_$1 timeout 100 $bin bench --batches 1,8,32,64,128,256,512 \
    --where "$where,num_warps=4|8,producers=2,merge=1|2,target_ctas=128|256|1024" --no-default \
    >"$logs/bench_${1}_$2.log" 2>&1
  echo "bench $1 round $2 rc=$? at $(($(date +%s) - began)) s"
}

bench_table() {  # the fastest launch variant per batch, per bench log
  for f in "$logs"/bench_*.log; do
    echo "== $f"; grep -E "\(fastest\)" "$f" |
      awk '{for (i = 2; i <= NF; i++) if ($i ~ /^[0-9.]+$/) {print $1, $i; break}}' | tr '\n' ' '
    echo
  done
}

case $part in
  a)
    repeat fp8_ds_mla:4 40
    repeat fp8_ds_mla:2 8
    TUNER_GPU_MATRIX=fp8_ds_mla:4 timeout 80 build/tests/gpu_sparse_mla_decode \
      -tce="every config*" >"$logs/corners.log" 2>&1
    echo "corners rc=$? $(grep -E 'test cases' "$logs/corners.log" | tail -n 1)"
    head -n 20 "$logs"/moved_*.log 2>/dev/null | cut -c1-250
    if [ -x .devcarry/bin/tuner_old ] && [ "$(left)" -gt 220 ]; then
      bench old 1; bench new 1; bench_table
    fi
    ;;
  b)
    [ -x .devcarry/bin/tuner_old ] || { echo "no .devcarry/bin/tuner_old"; exit 2; }
    for round in 1 2; do bench old $round; bench new $round; done
    bench_table
    ;;
esac
