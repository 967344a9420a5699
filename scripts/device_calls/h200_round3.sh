#!/usr/bin/env bash
# Third H200 round after moving the index loads off the gather critical path: correctness suite, capture test, bench,
# the full default sweep, kill -9 + resume, and a sweep pruned with sm_120's limits.
set -u
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
logs=$(mktemp -d)
cache=$(mktemp -d)
export TUNER_CACHE=$cache
step() { echo "== $*"; }
step "gpu_sparse_mla_decode"; TUNER_GPU_LOG=$logs/checks.log timeout 200 $bin/gpu_sparse_mla_decode >$logs/gpu_smla.log 2>&1; rc=$?; echo "rc=$rc"; grep -E "^(fp8|bf16)|MESSAGE|test cases|assertions" $logs/gpu_smla.log | tail -40
if [ $rc -ne 0 ]; then tar -C $logs -czf $out/round3.tar.gz .; echo "correctness failed: stopping"; exit 1; fi
step "gpu_capture"; TUNER_BINARY=$PWD/$bin/tuner timeout 120 $bin/gpu_capture >$logs/gpu_capture.log 2>&1; echo "rc=$?"; tail -6 $logs/gpu_capture.log
step "gpu_cuda_driver"; timeout 60 $bin/gpu_cuda_driver >$logs/gpu_cuda_driver.log 2>&1; echo "rc=$?"; tail -4 $logs/gpu_cuda_driver.log
step "bench --all fp8"; timeout 150 $bin/tuner bench --all >$logs/bench.log 2>&1; echo "rc=$?"; tail -12 $logs/bench.log
step "default sweep, cold cache"; /usr/bin/time -f "wall %e s" timeout 240 $bin/tuner sweep --db $logs/tuning.db --cache-dir $cache >$logs/sweep.log 2>$logs/sweep.err; echo "rc=$?"; cat $logs/sweep.log; tail -1 $logs/sweep.err
step "kill -9 and resume"; OUT=$logs timeout 120 scripts/device_calls/h200_resume_check.sh $bin/tuner 8 2>&1 | tail -12
step "sweep with --budget-arch sm_120"; timeout 150 $bin/tuner sweep --db $logs/tuning.db --cache-dir $cache --budget-arch sm_120 --batches 1,8,32,64,128 >$logs/sweep_sm120.log 2>$logs/sweep_sm120.err; echo "rc=$?"; cat $logs/sweep_sm120.log
tar -C $logs -czf $out/round3.tar.gz .
