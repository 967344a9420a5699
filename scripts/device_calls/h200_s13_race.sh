#!/usr/bin/env bash
# H200, thirteenth session, call B: the fp8 32-head matrix row at batch 64, topk 2048 gave max out
# error 9.72e-3 on this tree (call A) where the eleventh session's run of the same row and inputs
# (tree bfe9dc1) gave 2.08e-3. One line per check (TUNER_GPU_LOG) finds the configs; the row runs
# twice in one process (a moving error is a race), then the 16-head row at batch 64 the same way.
# Usage: scripts/device_calls/h200_s13_race.sh   (carry .devcarry; logs in $OUT)
source scripts/device_call_env.sh
for part in fp8_ds_mla:2 fp8_ds_mla:4; do
  name=${part//:/_}
  TUNER_GPU_MATRIX=$part TUNER_GPU_MATRIX_BATCHES=64,64 TUNER_GPU_MATRIX_TOPKS=2048 \
    TUNER_GPU_LOG=$out/checks_$name.log timeout ${LIMIT_S:-200} build/tests/gpu_sparse_mla_decode \
    -tc="every config*" >"$out/matrix_$name.log" 2>&1
  echo "$part rc=$? at $(($(date +%s) - began)) s"
  grep -E "^fp8_ds_mla " "$out/matrix_$name.log"
  # The worst checks: out error is the field after "out rel err".
  awk '{for (i = 1; i < NF; i++) if ($i == "err" && $(i-2) == "out") print $(i+1), $0}' \
    "$out/checks_$name.log" | sort -g -r | head -n 8 | cut -c1-400
  gzip -f "$out/checks_$name.log"
done
