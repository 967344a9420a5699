#!/usr/bin/env bash
# Issue 12, fourth round, on the H200 (~5 min of device time for `all`): the batch search (with
# 377cd45: every launch-time variant of the kernel nearest a neighbour's best) against its
# targets, with regrets that compare two full-protocol timings of one run.
#   main     the default sweep (51 cudagraph sizes, 3, 5, 6, 7 and the wave and cluster edges) with a fresh cubin cache
#            (cold, target < 120 s; its wall split: plan, worker compile/load, verify, timing = screens + full
#            protocol, search), then the same command again (warm, nothing changed: < 5 s)
#   search   an oracle at 16 batches (the 11 old defaults, 3 and 6 (tuned since the twelfth
#            session), 256, and 136 / 272 just past the waves of 132 SMs): every config screened (6 replays, nothing skipped), then its 4 fastest
#            screens, the default and the searched winner (--also-time, from `regret.py also-time
#            search`) timed in full in interleaved rounds; scripts/regret.py search compares the
#            two full-protocol medians (target <= 2 % at every batch). The screens' regret
#            (--protocol first-pass, the s3 figure) is printed beside it.
#   bucket   the same oracle at 21 batches the sweep did not tune (3, 5, 6, 7 left the list when
#            the default set took every batch 1-8; 10, 13, 18, 25 took their places), the lookup's config timed in
#            full; scripts/regret.py bucket (target <= 3 %)
#   tests    (not in `all`: a separate call) TUNER_REQUIRE_GPU=1 gpu_sweep and gpu_measure
# Usage: scripts/device_calls/h200_issue12_s4.sh [BUILD_DIR] [all|main|search|bucket|tests]
# BUILD_DIR defaults to the carried build (.devcarry/build, linked as build/). A short table is
# printed last; the logs of this call go into $OUT/issue12_s4_logs.tgz; DBs and the cubin cache
# stay in $WORK (default /tmp/issue12_s4), so `search` or `bucket` can follow `main` on the same
# machine.
set -u
build=${1:-build}
step=${2:-all}
out=${OUT:-/tmp/tuner-out}
work=${WORK:-/tmp/issue12_s4}
finalists=${ORACLE_FINALISTS:-4}  # the oracle's screens timed in full per batch
here=$(cd "$(dirname "$0")/.." && pwd)  # scripts/, where the shared helpers are
# shellcheck source=scripts/issue12_lib.sh
source "$here/issue12_lib.sh"
began=$(seconds)

# oracle CHECK LIMIT_S BATCHES: every config screened (6 replays) at BATCHES, nothing skipped; the
# N fastest screens, the default and the tuned side's config (--also-time) timed in full.
oracle() {
  local check=$1 limit=$2 batches=$3
  rm -f "$work/oracle_$check.db"
  python3 "$here/regret.py" also-time "$check" --tuned "$db" --batches "$batches" \
    --out "$work/also_$check.json" >"$work/also_$check.log" 2>&1 || failed=1
  sweep "oracle_$check" "$limit" --db "$work/oracle_$check.db" --batches "$batches" \
    --search-margin 1000 --search-keep 100000 --screen-replays 6 --finalists "$finalists" \
    --finalist-margin 100 --also-time "$work/also_$check.json"
  table+=("oracle $check (${last_s} s): $(grep '^time:' "$work/oracle_$check.log" | cut -c7-140)")
  table+=("  $(grep '^protocol:' "$work/oracle_$check.log" | cut -c1-100)")
}

# regret CHECK LIMIT_PCT MIN_BATCHES: full protocol (the verdict), then the screens' figure.
regret() {
  python3 "$here/regret.py" "$1" --tuned "$db" --oracle "$work/oracle_$1.db" --max-regret "$2" \
    --min-batches "$3" >"$work/regret_$1.log" 2>&1 || failed=1
  python3 "$here/regret.py" "$1" --tuned "$db" --oracle "$work/oracle_$1.db" --max-regret "$2" \
    --protocol first-pass >"$work/regret_$1_screens.log" 2>&1
  table+=("$1 (full protocol, both sides one run): $(grep -E "^$1: |error" "$work/regret_$1.log" |
    tr '\n' ' ' | cut -c1-300)")
  table+=("  screens only (s3's protocol): $(grep -E "^$1: worst|error" "$work/regret_$1_screens.log")")
}

run_search() {
  oracle search 250 1,2,3,4,6,8,16,32,48,64,80,96,128,136,256,272
  regret search 2 16
}

run_bucket() {
  oracle bucket 330 9,10,12,13,18,20,25,28,37,44,50,60,76,100,130,150,201,260,300,401,500
  regret bucket 3 20
}

run_step "$step"
for log in "$work"/regret_search.log "$work"/regret_bucket.log; do
  [ -f "$log" ] && cut -c1-200 "$log"
done
finish s4 ", $(took "$began" "$(seconds)") s"
