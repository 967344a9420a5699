#!/usr/bin/env bash
# H200, after merging the family interface (issue 10) with the pipelined kernel (issue 9): the fp8
# GEMM family's GPU test and a short sweep, then a sparse MLA sweep through the generic worker into
# the same DB, one frozen DB with both families and look-ups of both. Fits one 6-minute call.
set -u
source scripts/device_env.sh >/dev/null
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
cache=$(mktemp -d)
echo "== gpu_fp8_gemm"
timeout 110 $bin/gpu_fp8_gemm >$out/gpu_fp8_gemm.log 2>&1
echo "rc=$?"; grep -E "checks run|test cases|assertions|ERROR|MESSAGE" $out/gpu_fp8_gemm.log | head -12
echo "== fp8_gemm sweep N=7168 K=4096, M 8 and 128"
/usr/bin/time -f "wall %e s" timeout 110 $bin/tuner sweep --family fp8_gemm --n 7168 --k 4096 \
  --batches 8,128 --db $out/both.db --cache-dir $cache >$out/gemm_sweep.log 2>$out/gemm_sweep.err
echo "rc=$?"; cat $out/gemm_sweep.log; tail -2 $out/gemm_sweep.err
echo "== sparse_mla_decode sweep, batches 1 and 128"
/usr/bin/time -f "wall %e s" timeout 70 $bin/tuner sweep --batches 1,128 --db $out/both.db \
  --cache-dir $cache >$out/smla_sweep.log 2>$out/smla_sweep.err
echo "rc=$?"; cat $out/smla_sweep.log; tail -2 $out/smla_sweep.err
echo "== freeze both, look both up"
$bin/tuner freeze --db $out/both.db --out $out/frozen.db --cache-dir $cache 2>&1 | tail -2
$bin/tuner query --db $out/frozen.db --family fp8_gemm --n 7168 --k 4096 --batch 100 2>&1 | tail -3
$bin/tuner query --db $out/frozen.db --heads 128 --tp 8 --batch 128 2>&1 | tail -3
$bin/tuner export --db $out/both.db --format vllm-json --out $out/vllm 2>&1 | tail -2
ls $out/vllm
