#!/usr/bin/env bash
# Last H200 round: the GPU tests from the final build, and the full default sweep with a warm
# cubin cache on a fresh DB (the cold one is in round 3).
set -u
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
logs=$(mktemp -d)
cache=$(mktemp -d)
echo "== gpu_cuda_driver"; timeout 60 $bin/gpu_cuda_driver >$logs/gpu_cuda_driver.log 2>&1; echo "rc=$?"; tail -3 $logs/gpu_cuda_driver.log
echo "== gpu_capture"; TUNER_BINARY=$PWD/$bin/tuner timeout 90 $bin/gpu_capture >$logs/gpu_capture.log 2>&1; echo "rc=$?"; tail -3 $logs/gpu_capture.log
echo "== gpu_sparse_mla_decode"; TUNER_GPU_LOG=$logs/checks.log timeout 120 $bin/gpu_sparse_mla_decode >$logs/gpu_smla.log 2>&1; echo "rc=$?"; grep -E "checks run|test cases|assertions" $logs/gpu_smla.log
echo "== warm the cubin cache (plan), then the default sweep on a fresh DB"
$bin/tuner plan --arch sm_90 --cache-dir $cache >/dev/null 2>&1
/usr/bin/time -f "wall %e s" timeout 150 $bin/tuner sweep --db $logs/tuning_warm.db --cache-dir $cache >$logs/sweep_warm.log 2>$logs/sweep_warm.err; echo "rc=$?"; head -4 $logs/sweep_warm.log; tail -1 $logs/sweep_warm.err
gzip $logs/checks.log
tar -C $logs -czf $out/final.tar.gz .
