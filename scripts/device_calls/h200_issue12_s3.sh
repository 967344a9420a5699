#!/usr/bin/env bash
# Issue 12, third round, on the H200 (~8 min of device time for `all`): the batch search with
# screening (every candidate screened, finalists timed in full), measured against its targets.
#   main     the default sweep over all 51 cudagraph sizes with a fresh cubin cache (cold, target
#            < 120 s; its wall split: plan, worker compile/load, verify, timing = screens + full
#            protocol, search), then the same command again (warm, nothing changed: < 5 s)
#   search   an oracle: every config screened at 12 batches incl. the 11 old defaults (nothing
#            skipped; --screen-replays 6, one protocol for every config), then scripts/regret.py
#            search: the searched winner vs the oracle's best (target <= 2 % at every batch)
#   bucket   the same oracle at 21 batches the sweep did not tune, then scripts/regret.py bucket:
#            the config tunedb's lookup returns there vs the oracle's best (target <= 3 %)
#   tests    (not in `all`: a separate call) TUNER_REQUIRE_GPU=1 gpu_sweep and gpu_measure
# Usage: scripts/device_calls/h200_issue12_s3.sh [BUILD_DIR] [all|main|search|bucket|tests]
# BUILD_DIR defaults to the carried build (.devcarry/build, linked as build/). A short table is
# printed last; the logs of this call go into $OUT/issue12_s3_logs.tgz (the device returns few
# files); DBs and the cache stay in $WORK (default /tmp/issue12_s3).
set -u
build=${1:-build}
step=${2:-all}
out=${OUT:-/tmp/tuner-out}
# DBs and the cubin cache stay outside $OUT (large), so a later call on the same machine can run
# `search` or `bucket` against the tuned DB of `main`.
work=${WORK:-/tmp/issue12_s3}
here=$(cd "$(dirname "$0")/.." && pwd)  # scripts/, where the shared helpers are
# shellcheck source=scripts/issue12_lib.sh
source "$here/issue12_lib.sh"

# oracle NAME LIMIT_S BATCHES: every config screened (6 replays) at BATCHES, nothing skipped.
oracle() {
  rm -f "$work/oracle_$1.db"
  sweep "oracle_$1" "$2" --db "$work/oracle_$1.db" --batches "$3" --search-margin 1000 \
    --search-keep 100000 --finalists 0 --screen-replays 6
  table+=("oracle $1 (${last_s} s): $(grep '^time:' "$work/oracle_$1.log" | cut -c1-100)")
}

# regret CHECK LIMIT_PCT MIN_BATCHES (the oracle's screens on both sides)
regret() {
  python3 "$here/regret.py" "$1" --tuned "$db" --oracle "$work/oracle_$1.db" --max-regret "$2" \
    --min-batches "$3" --protocol first-pass >"$work/regret_$1.log" 2>&1 || failed=1
  table+=("$(tail -n 3 "$work/regret_$1.log" | grep -E "regret|fewer|error")")
}

run_search() {
  oracle search 110 1,2,4,8,16,32,48,64,80,96,128,256
  regret search 2 12
}

run_bucket() {
  oracle bucket 200 3,5,6,7,9,12,20,28,37,44,50,60,76,100,130,150,201,260,300,401,500
  regret bucket 3 20
}

run_step "$step"
for log in "$work"/regret_*.log; do [ -f "$log" ] && cut -c1-160 "$log"; done
finish s3
