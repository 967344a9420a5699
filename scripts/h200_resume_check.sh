#!/usr/bin/env bash
# kill -9 in the middle of a sweep, then resume: every trial must be there exactly once.
# Usage: scripts/h200_resume_check.sh TUNER_BINARY [SECONDS_BEFORE_KILL]
set -u
tuner=${1:?usage: $0 TUNER_BINARY [SECONDS]}
delay=${2:-20}
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out"
cache=${TUNER_CACHE:-$(mktemp -d)}
db="$out/resume.db"
"$tuner" sweep --db "$db" --cache-dir "$cache" --batches 1,4,16 >"$out/resume_killed.log" 2>&1 &
pid=$!
sleep "$delay"
kill -9 "$pid"
wait "$pid" 2>/dev/null
echo "killed sweep $pid with SIGKILL after ${delay}s"
python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); print('after kill: measured trials', db.execute(\"SELECT COUNT(*) FROM trials WHERE stage='measure'\").fetchone()[0], 'integrity', db.execute('PRAGMA integrity_check').fetchone()[0])" "$db"
"$tuner" sweep --db "$db" --cache-dir "$cache" --batches 1,4,16 >"$out/resume_restart.log" 2>"$out/resume_restart.err"
echo "restart exit code $?"
tail -n 8 "$out/resume_restart.log"
python3 - "$db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("integrity:", db.execute("PRAGMA integrity_check").fetchone()[0])
survivors = db.execute("SELECT COUNT(DISTINCT params_json) FROM trials WHERE stage='plan' AND fate='survivor'").fetchone()[0]
per_batch = db.execute("SELECT p.batch, COUNT(*), COUNT(DISTINCT t.params_json) FROM trials t JOIN problems p ON p.id = t.problem_id WHERE t.stage='measure' GROUP BY p.batch").fetchall()
print("plan survivors per plan run:", survivors)
for batch, n, distinct in per_batch:
    print(f"batch {batch}: {n} measured trials, {distinct} distinct configs", "OK" if n == distinct == survivors else "MISMATCH")
print("winners:", db.execute("SELECT batch, decision FROM winners ORDER BY batch").fetchall())
PY
