#!/usr/bin/env bash
# kill -9 in the middle of a sweep, then resume: the worker must not outlive the killed sweep,
# and every trial must be there exactly once (transient rows, which a resume retries, aside).
# Exits 1 on any MISMATCH, ORPHAN, failed restart or integrity problem.
# Usage: scripts/device_calls/h200_resume_check.sh TUNER_BINARY [SECONDS_BEFORE_KILL]
set -u
tuner=${1:?usage: $0 TUNER_BINARY [SECONDS]}
delay=${2:-20}
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out"
cache=${TUNER_CACHE:-$(mktemp -d)}
db="$out/resume.db"
failed=0
"$tuner" sweep --db "$db" --cache-dir "$cache" --batches 1,4,16 >"$out/resume_killed.log" 2>&1 &
pid=$!
sleep "$delay"
workers=$(pgrep -P "$pid" || true)
kill -9 "$pid"
wait "$pid" 2>/dev/null
echo "killed sweep $pid with SIGKILL after ${delay}s (its workers: ${workers:-none})"
sleep 2
for worker in $workers; do
  if kill -0 "$worker" 2>/dev/null; then
    echo "ORPHAN: worker $worker outlived the killed sweep"
    failed=1
  fi
done
python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); print('after kill: measured trials', db.execute(\"SELECT COUNT(*) FROM trials WHERE stage='measure'\").fetchone()[0], 'integrity', db.execute('PRAGMA integrity_check').fetchone()[0])" "$db"
"$tuner" sweep --db "$db" --cache-dir "$cache" --batches 1,4,16 >"$out/resume_restart.log" 2>"$out/resume_restart.err"
restart=$?
echo "restart exit code $restart"
[ "$restart" -eq 0 ] || failed=1
tail -n 8 "$out/resume_restart.log"
python3 - "$db" <<'PY' || failed=1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ok = True
integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
print("integrity:", integrity)
ok &= integrity == "ok"
survivors = db.execute("SELECT COUNT(DISTINCT params_json) FROM trials WHERE stage='plan' AND fate='survivor'").fetchone()[0]
per_batch = db.execute("SELECT p.batch, COUNT(*), COUNT(DISTINCT t.params_json) FROM trials t JOIN problems p ON p.id = t.problem_id WHERE t.stage='measure' AND t.fate <> 'transient' GROUP BY p.batch").fetchall()
print("plan survivors per plan run:", survivors)
for batch, n, distinct in per_batch:
    good = n == distinct == survivors
    ok &= good
    print(f"batch {batch}: {n} measured trials, {distinct} distinct configs", "OK" if good else "MISMATCH")
ok &= len(per_batch) == 3
print("transient rows:", db.execute("SELECT COUNT(*) FROM trials WHERE fate='transient'").fetchone()[0])
print("winners:", db.execute("SELECT batch, decision FROM winners ORDER BY batch").fetchall())
sys.exit(0 if ok else 1)
PY
if [ "$failed" -ne 0 ]; then
  echo "h200_resume_check: FAILED"
  exit 1
fi
echo "h200_resume_check: OK"
