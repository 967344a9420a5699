#!/usr/bin/env bash
# H200, issue 9: the corner-case and far-row GPU tests, the default 11-batch sweep (timed) and a
# sweep pruned with sm_120's limits; the DBs come back for `tuner report`.
set -u
source scripts/device_env.sh >/dev/null
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
cache=$(mktemp -d)
echo "== gpu_sparse_mla_decode: reference, corner cases, 4M-token cache"
timeout 100 $bin/gpu_sparse_mla_decode -tce="every config*" >$out/gpu_corner.log 2>&1
echo "rc=$?"; grep -E "MESSAGE|4M-token|GPU vs CPU|test cases|assertions|ERROR" $out/gpu_corner.log | head -20
echo "== default sweep (cold cubin cache, fresh DB)"
/usr/bin/time -f "wall %e s" timeout 250 $bin/tuner sweep --db $out/tuning.db --cache-dir $cache \
  >$out/sweep.log 2>$out/sweep.err
echo "rc=$?"; cat $out/sweep.log; grep -E "wall|sweep:" $out/sweep.err | tail -3
echo "== sweep with --budget-arch sm_120"
timeout 120 $bin/tuner sweep --db $out/tuning.db --cache-dir $cache --budget-arch sm_120 \
  --batches 1,8,32,64,128 >$out/sweep_sm120.log 2>$out/sweep_sm120.err
echo "rc=$?"; cat $out/sweep_sm120.log
