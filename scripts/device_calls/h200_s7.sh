#!/usr/bin/env bash
# H200, 2026-12-02 (seventh session): one launch measured once (tuner/same_launch.hpp) on top of
# the cluster merge. Parts, each one device call, in order on one warm machine ($WORK kept):
#   a  the default sweep cold and warm (h200_issue12_s4.sh main: < 120 s, < 5 s), gpu_sweep and
#      gpu_tunedb_cuda (the serving launcher's cluster launches), then the search oracle
#      (h200_issue12_s4.sh search: <= 2 % at 14 batches) with the time left
#   b  the bucket oracle (<= 3 % at 21 untuned batches; runs `main` first when $WORK lost its DB),
#      racecheck + synccheck (the fourth session's bf16 config, and the cluster merge at batch
#      64), Nsight Compute on the batch-64 winner's kernel with merge 1 and merge 2
#   c  the reference sweep: sm_120-budget sweep (fp8) and a bf16 sweep into the main DB, `tuner
#      report` of it (docs/reference-sweep), then the 32- and 64-head correctness matrices with
#      the time left
# Usage: scripts/device_calls/h200_s7.sh a|b|c|d   (carry .devcarry; a short table is printed last; logs in $OUT)
set -u
part=${1:?usage: scripts/device_calls/h200_s7.sh a|b|c|d}
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
export WORK=/tmp/s7
logs=$out/s7_$part
mkdir -p "$logs" "$WORK"
export TUNER_REQUIRE_GPU=1
began=$(date +%s)
left() { echo $((${BUDGET_S:-560} - $(date +%s) + began)); }
tuner=build/tuner/tuner
where_b64="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
where_b64="$where_b64,producers=2,target_ctas=256"

gpu_test() {  # gpu_test NAME LIMIT_S
  timeout "$2" "build/tests/$1" >"$logs/$1.full.log" 2>&1
  echo "$1 rc=$? $(grep -E 'test cases' "$logs/$1.full.log" | tail -n 1)"
  grep -v "cuModuleUnload\|cuMemFree\|cuStreamDestroy\|^sweep [0-9]" "$logs/$1.full.log" |
    tail -n 200 >"$logs/$1.log"
  rm -f "$logs/$1.full.log"
}

matrix() {  # matrix PARTS LIMIT_S: the GPU matrix restricted to PARTS (format:TP,...)
  TUNER_GPU_MATRIX=$1 timeout "$2" build/tests/gpu_sparse_mla_decode -tc="every config*" \
    >"$logs/matrix_${1//[:,]/_}.log" 2>&1
  echo "matrix $1 rc=$? (limit $2 s) $(grep -cE '^(fp8_ds_mla|bf16) ' "$logs/matrix_${1//[:,]/_}.log") rows; $(grep -E 'checks run|test cases' "$logs/matrix_${1//[:,]/_}.log" | tail -n 2 | tr '\n' ' ')"
}

case "$part" in
  a)
    bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
    cp "$WORK"/cold.log "$WORK"/warm.log "$logs/" 2>/dev/null
    gpu_test gpu_sweep 200
    gpu_test gpu_tunedb_cuda 90
    [ "$(left)" -gt 150 ] && timeout "$(left)" bash scripts/device_calls/h200_issue12_s4.sh build search \
      >"$logs/search.txt" 2>&1
    echo "search rc=$?"; tail -n 5 "$logs/search.txt" 2>/dev/null | cut -c1-220
    cut -c1-220 "$logs/main.txt" | tail -n 9
    ;;
  b)
    [ -f "$WORK/tuned.db" ] || bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
    timeout 340 bash scripts/device_calls/h200_issue12_s4.sh build bucket >"$logs/bucket.txt" 2>&1
    echo "bucket rc=$?"; tail -n 4 "$logs/bucket.txt" | cut -c1-220
    race_bf16='block_t=16,num_warps=8,producers=2,ctas_per_sm=3,target_ctas=1024,merge=1'
    for tool in racecheck synccheck; do
      timeout 60 compute-sanitizer --tool "$tool" --error-exitcode 9 $tuner bench --kv bf16 \
        --topk 600 --batches 64 --where "$race_bf16" --trimmed --no-default --launches 1 \
        --l2 flush >"$logs/${tool}_bf16.log" 2>&1
      echo "$tool bf16 rc=$? $(grep -E 'ERROR SUMMARY' "$logs/${tool}_bf16.log" | head -n 1)"
      timeout 60 compute-sanitizer --tool "$tool" --error-exitcode 9 $tuner bench \
        --kv fp8_ds_mla --batches 64 --where "$where_b64,merge=2" --no-default --launches 1 \
        --l2 flush >"$logs/${tool}_cluster.log" 2>&1
      echo "$tool cluster rc=$? $(grep -E 'ERROR SUMMARY' "$logs/${tool}_cluster.log" | head -n 1)"
    done
    for merge in 1 2; do
      timeout 90 ncu --clock-control none -k regex:split -c 1 --section SpeedOfLight \
        --section Occupancy --section LaunchStats --section WarpStateStats \
        $tuner bench --kv fp8_ds_mla --batches 64 --where "$where_b64,merge=$merge" --no-default \
        >"$logs/ncu_b64_merge$merge.log" 2>&1
      echo "ncu merge $merge rc=$?"
      grep -E "Duration|DRAM Throughput|Cluster|Achieved Occupancy|Theoretical Occupancy|Waves Per SM|Block Limit Shared|Stall" \
        "$logs/ncu_b64_merge$merge.log" | head -n 14
    done
    ;;
  d)
    # The cluster merge's splits within the device's clusters (split rule 3) and merge 2 swept on
    # every 4 + 2 warp kernel: the default sweep, the GPU tests, both oracles, and racecheck on
    # one kernel with merge 1 (the control: no exchange) and merge 2 at batch 4 (32 CTAs), with
    # the SASS at the offsets racecheck names.
    bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
    cp "$WORK"/cold.log "$WORK"/warm.log "$logs/" 2>/dev/null
    gpu_test gpu_cuda_driver 60
    gpu_test gpu_tunedb_cuda 90
    gpu_test gpu_sweep 150
    timeout 200 bash scripts/device_calls/h200_issue12_s4.sh build bucket >"$logs/bucket.txt" 2>&1
    echo "bucket rc=$?"
    l=$(left); [ "$l" -gt 100 ] && timeout $((l - 60)) bash scripts/device_calls/h200_issue12_s4.sh build search \
      >"$logs/search.txt" 2>&1
    echo "search rc=$?"
    for merge in 1 2; do
      XDG_CACHE_HOME=$WORK/race_cache timeout 40 compute-sanitizer --tool racecheck $tuner bench \
        --kv fp8_ds_mla --batches 4 --where "${where_b64/target_ctas=256/target_ctas=128},merge=$merge" \
        --no-default --launches 1 --l2 flush >"$logs/racecheck_m$merge.log" 2>&1
      echo "racecheck merge $merge rc=$? $(grep -E 'RACECHECK SUMMARY' "$logs/racecheck_m$merge.log")"
    done
    kernel=sparse_mla_decode_split_pipelinedILi64ELi16ELi4ELi2ELi0ELi1ELi2ELi0ELi1E
    grep -rl "$kernel" "$WORK/race_cache" | head -n 1 | xargs -r cuobjdump -sass |
      awk -v k="$kernel" '/Function :/ {on = index($0, k) > 0} on' >"$logs/race_sass.txt"
    for off in $(grep -oE '\+0x[0-9a-f]+' "$logs/racecheck_m2.log" | sort -u | head -n 12); do
      grep -m1 -E "/\*0*${off#+0x}\*/" "$logs/race_sass.txt" | sed "s/^ */$off /" | cut -c1-110
    done
    tail -n 6 "$logs/bucket.txt" | cut -c1-220
    tail -n 4 "$logs/search.txt" 2>/dev/null | cut -c1-220
    cut -c1-220 "$logs/main.txt" | tail -n 9
    ;;
  c)
    [ -f "$WORK/tuned.db" ] || bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
    timeout 200 $tuner sweep --db "$WORK/tuned.db" --cache-dir "$WORK/cache" --budget-arch sm_120 \
      >"$logs/sweep_sm120.log" 2>&1
    echo "sm_120-budget sweep rc=$?"; grep -E "^time:|^run " "$logs/sweep_sm120.log" | cut -c1-200
    timeout 150 $tuner sweep --db "$WORK/tuned.db" --cache-dir "$WORK/cache" --kv bf16 \
      --batches 1,8,32,64,128,256,512 >"$logs/sweep_bf16.log" 2>&1
    echo "bf16 sweep rc=$?"; grep -E "^time:|^run " "$logs/sweep_bf16.log" | cut -c1-200
    $tuner report --db "$WORK/tuned.db" --out "$out/reference-sweep" >"$logs/report.log" 2>&1
    echo "report rc=$?"
    cp "$WORK/tuned.db" "$out/reference-sweep.sqlite"
    l=$(left); [ "$l" -gt 60 ] && matrix fp8_ds_mla:2 $((l / 2))
    l=$(left); [ "$l" -gt 40 ] && matrix bf16:2 "$l"
    ;;
  *) echo "unknown part '$part': use a, b, c or d" >&2; exit 2 ;;
esac
cp "$WORK"/summary.txt "$logs/" 2>/dev/null
tar -C "$out" -czf "$out/s7_$part.tgz" "s7_$part" && rm -rf "$logs"
