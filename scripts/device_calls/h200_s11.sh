#!/usr/bin/env bash
# H200, eleventh session (2026-12-02), one call (~9 min):
#   1. the producers-first start (4726866: producer warps gather while the consumers load q)
#      against the tree before it (b44f946, .devcarry/bin/tuner_old from
#      scripts/devcarry_old_tuner.sh b44f946) on the winners' structure, rounds old/new/old/new;
#   2. the default sweep cold and warm with the new kernel (h200_issue12_s4.sh main), and its
#      `tuner report`;
#   3. the corner cases of gpu_sparse_mla_decode (all -1, duplicates, topk < BLOCK_T, a cache past
#      2^31 bytes);
#   4. the bucket oracle (h200_issue12_s4.sh bucket), --also-time twins now timed once;
#   5. the fp8 16-head correctness matrix with the time left.
# Usage: BUDGET_S=560 scripts/device_calls/h200_s11.sh   (carry .devcarry; a short table is printed last)
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
export TUNER_REQUIRE_GPU=1
out=${OUT:-/tmp/tuner-out}
logs=$out/s11
mkdir -p "$logs"
began=$(date +%s)
left() { echo $((${BUDGET_S:-560} - $(date +%s) + began)); }
where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
where="$where,producers=2,merge=1|2,target_ctas=128|256|512"

bench() {  # bench old|new ROUND
  local bin=build/tuner/tuner
  [ "$1" = old ] && bin=.devcarry/bin/tuner_old
  XDG_CACHE_HOME=/tmp/s11_cache_$1 timeout 80 $bin bench --batches 8,32,64,128,136,256,512 \
    --where "$where" --no-default --best-per schedule >"$logs/bench_${1}_$2.log" 2>&1
  echo "bench $1 round $2 rc=$? at $(($(date +%s) - began)) s"
}

for round in 1 2; do bench old $round; bench new $round; done
timeout 160 bash scripts/device_calls/h200_issue12_s4.sh build main >"$logs/main.txt" 2>&1
echo "issue 12 main rc=$? at $(($(date +%s) - began)) s"
build/tuner/tuner report --db /tmp/issue12_s4/tuned.db --out "$logs/report_main" \
  >"$logs/report.log" 2>&1
echo "report rc=$?"
TUNER_GPU_MATRIX=fp8_ds_mla:4 timeout 70 build/tests/gpu_sparse_mla_decode \
  -tce="every config*" >"$logs/corners.log" 2>&1
echo "corner cases rc=$? $(grep -E 'test cases' "$logs/corners.log" | tail -n 1)"
timeout $(($(left) > 200 ? 200 : $(left) - 20)) bash scripts/device_calls/h200_issue12_s4.sh build bucket \
  >"$logs/bucket.txt" 2>&1
echo "issue 12 bucket rc=$? at $(($(date +%s) - began)) s"
if [ "$(left)" -gt 60 ]; then
  TUNER_GPU_MATRIX=fp8_ds_mla:4 timeout $(($(left) - 25)) build/tests/gpu_sparse_mla_decode \
    -tc="every config*" >"$logs/matrix_fp8_4.log" 2>&1
  echo "matrix fp8_ds_mla:4 rc=$? $(grep -cE '^fp8_ds_mla ' "$logs/matrix_fp8_4.log") rows;" \
    "$(grep -E 'failed' "$logs/matrix_fp8_4.log" | grep -vE ' 0 failed|^fp8' | head -n 3)"
fi
tar -C "$out" -czf "$out/s11.tgz" s11
grep -E "^ +[0-9]+ .*schedule=" "$logs"/bench_*_1.log | sed -E 's/block_h=16 .* target_ctas/tc/' |
  cut -c1-150 | head -40
grep -E "^cold|^warm|^  time" "$logs/main.txt" | cut -c1-200
grep -E "^bucket" "$logs/bucket.txt"
rm -rf "$logs"
