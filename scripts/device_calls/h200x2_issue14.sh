#!/usr/bin/env bash
# Issue 14 on 2 H200s (kind nvidia-h200-x2), with the binaries carried in .devcarry/bin:
#   0. gpu_sweep with TUNER_REQUIRE_GPU=1 (a skip fails): the sweep path --devices goes through;
#   (a) the default sweep (batches $BATCHES) with --devices 0 and with --devices all on fresh DBs,
#       cubin cache warmed first by `tuner plan --arch sm_90` so both time measurement alone; wall
#       times and their ratio; winners compared per batch (identical, or within noise: the two
#       configs' single-GPU medians differ by at most 2 x max(their spreads, 1 %));
#   (b) --shard 1/2 then --shard 2/2 on GPU 0 into two DBs, tuner merge, winners compared with (a)'s
#       single-GPU sweep the same way; the merge run twice (idempotent: same trial count);
#   (c) --devices 0,7: exit 2 naming GPU 7, and no DB written.
# Logs under $OUT; the table is printed last; exit 1 when any check fails. ~4 min of GPU time.
set -u
source scripts/device_env.sh >/dev/null
bin=.devcarry/bin
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out"
batches=${BATCHES:-1,8,32,64,128}
cache=$(mktemp -d)
failed=0
rows=()
row() { rows+=("$(printf '%-34s %-10s %s' "$1" "$2" "$3")"); [ "$2" = FAIL ] && failed=1; }
now() { date +%s.%N; }

nvidia-smi -L >"$out/i14_gpus.txt" 2>&1; cat "$out/i14_gpus.txt"
TUNER_REQUIRE_GPU=1 timeout 240 $bin/gpu_sweep >"$out/i14_gpu_sweep.log" 2>&1
rc=$?; row "gpu_sweep (TUNER_REQUIRE_GPU=1)" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "rc=$rc"

$bin/tuner plan --arch sm_90 --cache-dir "$cache" --format csv >/dev/null 2>"$out/i14_plan.err"

sweep() {  # name, then tuner sweep options; prints the wall seconds
  local name=$1; shift
  local start; start=$(now)
  timeout 500 $bin/tuner sweep --exhaustive --batches "$batches" --cache-dir "$cache" "$@" \
    >"$out/i14_$name.log" 2>"$out/i14_$name.err"
  local rc=$?
  echo "$name rc=$rc" >>"$out/i14_rc.txt"
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(now)"
  return $rc
}
wall_one=$(sweep one --devices 0 --db "$out/i14_one.db"); rc1=$?
wall_all=$(sweep all --devices all --db "$out/i14_all.db"); rc2=$?
row "(a) sweep --devices 0" "$([ $rc1 -eq 0 ] && echo ok || echo FAIL)" "${wall_one} s"
row "(a) sweep --devices all" "$([ $rc2 -eq 0 ] && echo ok || echo FAIL)" \
  "${wall_all} s; $(grep -o 'on [0-9]* x [^(]*' "$out/i14_all.log" | head -1)"
ratio=$(python3 -c "print(f'{$wall_one / $wall_all:.2f}')" 2>/dev/null || echo "?")
row "(a) throughput ratio all / one" "$(python3 -c "print('ok' if $ratio >= 1.8 else 'below1.8')" 2>/dev/null || echo FAIL)" "${ratio}x (target >= 1.8x)"

# Winners of DB $2 against the single-GPU DB $1, batch by batch.
compare() {
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys
ref, other = (sqlite3.connect(f"file:{p}?mode=ro", uri=True) for p in sys.argv[1:3])
def winners(db):
    return {b: p for b, p in db.execute("SELECT batch, params_json FROM winners")}
def timing(batch, params):
    row = ref.execute("SELECT t.median_us, t.rel_spread FROM trials t JOIN problems p ON "
                      "p.id = t.problem_id WHERE p.batch = ? AND t.params_json = ? AND "
                      "t.stage = 'measure' AND t.fate = 'measured'", (batch, params)).fetchone()
    return row
a, b = winners(ref), winners(other)
same = noise = bad = 0
for batch in sorted(set(a) | set(b)):
    if a.get(batch) == b.get(batch):
        same += 1; continue
    ta, tb = timing(batch, a.get(batch)), timing(batch, b.get(batch))
    if ta and tb and abs(ta[0] - tb[0]) <= 2 * max(ta[1], tb[1], 0.01) * ta[0]:
        noise += 1
        print(f"batch {batch}: {a.get(batch)} {ta[0]:.2f} us vs {b.get(batch)} {tb[0]:.2f} us: within noise", file=sys.stderr)
    else:
        bad += 1
        print(f"batch {batch}: {a.get(batch)} {ta} vs {b.get(batch)} {tb}: DIFFERENT", file=sys.stderr)
print(f"{'ok' if bad == 0 and a else 'FAIL'} {len(a)} batches: {same} identical, {noise} within noise, {bad} different")
PY
}
result=$(compare "$out/i14_one.db" "$out/i14_all.db" 2>>"$out/i14_compare.log")
row "(a) winners all vs one" "${result%% *}" "${result#* }"

wall_s1=$(sweep shard1 --device 0 --shard 1/2 --db "$out/i14_shard1.db"); rs1=$?
wall_s2=$(sweep shard2 --device 0 --shard 2/2 --db "$out/i14_shard2.db"); rs2=$?
row "(b) --shard 1/2, 2/2 on GPU 0" "$([ $rs1 -eq 0 ] && [ $rs2 -eq 0 ] && echo ok || echo FAIL)" \
  "${wall_s1} s + ${wall_s2} s"
$bin/tuner merge "$out/i14_merged.db" "$out/i14_shard1.db" "$out/i14_shard2.db" \
  >"$out/i14_merge.log" 2>&1
rm=$?
$bin/tuner merge "$out/i14_merged.db" "$out/i14_shard1.db" "$out/i14_shard2.db" \
  >"$out/i14_merge_again.log" 2>&1
rm2=$?
row "(b) merge, merge again" "$([ $rm -eq 0 ] && [ $rm2 -eq 0 ] && grep -q ' 0 runs and 0 trials added' "$out/i14_merge_again.log" && echo ok || echo FAIL)" \
  "$(tail -1 "$out/i14_merge.log" | grep -o '[0-9]* trials added.*winners: [0-9]* decided')"
result=$(compare "$out/i14_one.db" "$out/i14_merged.db" 2>>"$out/i14_compare.log")
row "(b) merged winners vs one" "${result%% *}" "${result#* }"

$bin/tuner sweep --devices 0,7 --batches 1 --db "$out/i14_bad.db" --cache-dir "$cache" \
  >"$out/i14_bad.log" 2>&1
rc=$?
row "(c) --devices 0,7" "$([ $rc -eq 2 ] && grep -q 'GPU 7 does not exist' "$out/i14_bad.log" && [ ! -e "$out/i14_bad.db" ] && echo ok || echo FAIL)" \
  "rc=$rc, DB written: $([ -e "$out/i14_bad.db" ] && echo yes || echo no); $(tail -1 "$out/i14_bad.log" | cut -c1-90)"

echo
printf '%-34s %-10s %s\n' check result detail
for r in "${rows[@]}"; do echo "$r"; done
[ "$failed" -eq 0 ] && echo "h200x2_issue14: OK" || { echo "h200x2_issue14: FAILED"; exit 1; }
