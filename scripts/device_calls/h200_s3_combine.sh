#!/usr/bin/env bash
# H200, third session: the combine kernel loading 4 splits' partials before using any, against the
# one-at-a-time loop, one tuner binary each (.devcarry/ab/tuner_*), same configs, one run.
set -u
source scripts/device_env.sh >/dev/null
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out/cb"
where="mma_path=0|1,kv_unpack=0,ctas_per_sm=1,block_t=32|64,num_warps=4|8,num_stages=2,producers=0|2"
for v in before combine before combine; do
  log="$out/cb/$v.log"; [ -e "$log" ] && log="$out/cb/${v}_again.log"
  timeout 100 .devcarry/ab/tuner_$v bench --batches 8,32,64,128 --where "$where" >"$log" 2>&1
  echo "== $v rc=$? $(grep -c WRONG "$log") wrong"
  grep -E "\(fastest\)" "$log" | awk '{print $1, $2, $4, $5, $7, $8, $10, $11, $(NF-2)}'
done
tar -C "$out" -czf "$out/s3_combine.tgz" cb && rm -rf "$out/cb"
