#!/usr/bin/env bash
# H200, ninth session (2026-12-02), owed from the eighth:
#   a  the default fp8 sweep cold and warm (h200_issue12_s4.sh main), the s7 tuner
#      (.devcarry/bin/tuner_old, built from 19fc929) against this one on the winners' structure
#      (schedule 0's division fix: was 0.5-1.8 % slower), the --budget-arch sm_120 sweep and the
#      bf16 sweep into the same DB, and `tuner report` of it (docs/reference-sweep); the DB comes
#      back as $OUT/reference-sweep.sqlite.gz
#   b  (same machine, after a) the batch set 'clusters' swept into a copy of a's DB, then one
#      bucket oracle at 21 untuned batches that times both DBs' lookup configs in full: the bucket
#      regret without and with the cluster edges, from one run; first gpu_cuda_driver (the cluster
#      probe against a kernel held to the same occupancy)
#   c  the correctness matrix: fp8 at 32 local heads, bf16 at 64, the corner cases
# Before part a, on the CPU machine: scripts/devcarry_old_tuner.sh (tuner_old from 19fc929) and
# scripts/devcarry_refresh.sh.
# Usage: scripts/device_calls/h200_s9.sh a|b|c   (carry .devcarry; a short table is printed last; logs in $OUT)
set -u
part=${1:?usage: scripts/device_calls/h200_s9.sh a|b|c}
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
export WORK=/tmp/s9
logs=$out/s9_$part
mkdir -p "$logs" "$WORK"
export TUNER_REQUIRE_GPU=1
began=$(date +%s)
left() { echo $((${BUDGET_S:-570} - $(date +%s) + began)); }
tuner=build/tuner/tuner
where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
where="$where,producers=2"

bench() {  # bench old|new ROUND: every launch variant of the winners' structure, 64-512
  local bin=$tuner per=merge,target_ctas,schedule
  [ "$1" = old ] && bin=.devcarry/bin/tuner_old && per=merge,target_ctas
  XDG_CACHE_HOME=$WORK/cache_$1 timeout 55 $bin bench --batches 64,128,256,512 \
    --where "$where" --no-default --best-per "$per" >"$logs/bench_${1}_$2.log" 2>&1
  echo "bench $1 round $2 rc=$?"
}

matrix() {  # matrix PART LIMIT_S [TEST_CASE]
  local name=${1//:/_}
  TUNER_GPU_MATRIX=$1 timeout "$2" build/tests/gpu_sparse_mla_decode -tc="${3:-every config*}" \
    >"$logs/matrix_$name.log" 2>&1
  echo "matrix $1 rc=$? (limit $2 s) $(grep -cE '^(fp8_ds_mla|bf16) ' "$logs/matrix_$name.log") rows;" \
    "$(grep -E 'checks run|test cases' "$logs/matrix_$name.log" | tail -n 2 | tr '\n' ' ')"
}

case $part in
  a)
    bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
    cp "$WORK"/cold.log "$WORK"/warm.log "$logs/" 2>/dev/null
    # The default sweep's DB and cache as h200_issue12_s4.sh's, for its search and bucket steps
    # in a later call on this machine (this DB gets the sm_120 and bf16 sweeps too).
    rm -rf /tmp/issue12_s4 && mkdir -p /tmp/issue12_s4 &&
      cp -r "$WORK/tuned.db" "$WORK/cache" /tmp/issue12_s4/
    bench old 1
    bench new 1
    timeout 170 $tuner sweep --db "$WORK/tuned.db" --cache-dir "$WORK/cache" --budget-arch sm_120 \
      >"$logs/sweep_sm120.log" 2>&1
    echo "sm_120-budget sweep rc=$?"; grep -E "^time:|^run " "$logs/sweep_sm120.log" | cut -c1-200
    l=$(left)
    timeout $((l > 150 ? 150 : l - 10)) $tuner sweep --db "$WORK/tuned.db" --cache-dir \
      "$WORK/cache" --kv bf16 --batches 1,8,32,64,128,256,512 >"$logs/sweep_bf16.log" 2>&1
    echo "bf16 sweep rc=$?"; grep -E "^time:|^run " "$logs/sweep_bf16.log" | cut -c1-200
    $tuner report --db "$WORK/tuned.db" --out "$logs/reference-sweep" >"$logs/report.log" 2>&1
    echo "report rc=$?"
    gzip -c "$WORK/tuned.db" >"$out/reference-sweep.sqlite.gz"
    cut -c1-220 "$logs/main.txt" | tail -n 9
    for f in "$logs"/bench_*_1.log; do
      echo "== $f"; grep -vE "^ *$" "$f" | tail -n 16 | cut -c1-150
    done
    ;;
  b)
    # The cluster-edge batches into a copy of part a's DB, then one bucket oracle that times the
    # lookup's config of both DBs in full, so both regrets come from one run.
    [ -f "$WORK/tuned.db" ] || { echo "no $WORK/tuned.db: run part a on this machine first"; exit 2; }
    build/tests/gpu_cuda_driver >"$logs/gpu_cuda_driver.log" 2>&1
    echo "gpu_cuda_driver rc=$? $(grep -E 'test cases' "$logs/gpu_cuda_driver.log" | tail -n 1)"
    export TUNEDB_LIBRARY=$(ls build/db/libtunedb.so* .devcarry/lib/libtunedb.so* 2>/dev/null | head -n 1)
    bucket=3,5,6,7,9,12,20,28,37,44,50,60,76,100,130,150,201,260,300,401,500
    [ -f "$WORK/edges.db" ] || cp "$WORK/tuned.db" "$WORK/edges.db"
    timeout 100 $tuner sweep --db "$WORK/edges.db" --cache-dir "$WORK/cache" --batches clusters \
      >"$logs/sweep_clusters.log" 2>&1
    echo "clusters sweep rc=$?"; grep -E "^time:|^cluster edges" "$logs/sweep_clusters.log"
    for side in tuned edges; do
      python3 scripts/regret.py also-time bucket --tuned "$WORK/$side.db" --batches "$bucket" \
        --budget-arch sm_90 --shape kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048 \
        --out "$WORK/also_$side.json" >"$logs/also_$side.log" 2>&1
    done
    python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
merged = {}
for side in ("tuned", "edges"):
    for batch, configs in json.load(open(f"{work}/also_{side}.json")).items():
        for config in configs:
            if config not in merged.setdefault(batch, []):
                merged[batch].append(config)
json.dump(merged, open(f"{work}/also_both.json", "w"))
PY
    rm -f "$WORK/oracle_bucket.db"
    timeout 340 $tuner sweep --db "$WORK/oracle_bucket.db" --cache-dir "$WORK/cache" \
      --batches "$bucket" --search-margin 1000 --search-keep 100000 --screen-replays 6 \
      --finalists 4 --finalist-margin 100 --also-time "$WORK/also_both.json" \
      >"$logs/oracle_bucket.log" 2>&1
    echo "bucket oracle rc=$?"; grep -E "^time:" "$logs/oracle_bucket.log"
    for side in tuned edges; do
      python3 scripts/regret.py bucket --tuned "$WORK/$side.db" --oracle "$WORK/oracle_bucket.db" \
        --max-regret 3 --min-batches 1 >"$logs/regret_bucket_$side.log" 2>&1
      echo "== bucket regret, $side"; grep -E "^bucket: " "$logs/regret_bucket_$side.log"
    done
    gzip -c "$WORK"/oracle_bucket.db >"$out/oracle_bucket.sqlite.gz"
    ;;
  c)
    matrix fp8_ds_mla:2 $(($(left) / 2))
    matrix bf16:1 $(($(left) - 60))
    TUNER_GPU_MATRIX=fp8_ds_mla:4 timeout 50 build/tests/gpu_sparse_mla_decode \
      -tce="every config*" >"$logs/corners.log" 2>&1
    echo "other cases rc=$? $(grep -E 'test cases' "$logs/corners.log" | tail -n 1)"
    ;;
  *) echo "unknown part '$part': use a, b or c" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s9_$part.tgz" "s9_$part" && rm -rf "$logs"
