#!/usr/bin/env bash
# The sweep's acceptance checks on a GPU machine (issue 4), writing logs and DBs under $OUT:
#   1. the full default sweep, cold cubin cache          -> sweep_cold.log, tuning.db
#   2. the same sweep again on the same DB               -> sweep_rerun.log (0 new measurements)
#   3. a sweep with a test-only faulting candidate       -> sweep_fault.log, fault.db
# Usage: scripts/device_calls/h200_sweep_checks.sh TUNER_BINARY
set -u
tuner=${1:?usage: $0 TUNER_BINARY}
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out"
cache=$(mktemp -d)
count_measure() {
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("integrity:", db.execute("PRAGMA integrity_check").fetchone()[0])
for fate, n in db.execute("SELECT fate, COUNT(*) FROM trials WHERE stage='measure' GROUP BY fate ORDER BY fate"):
    print(f"measure trials {fate}: {n}")
dups = db.execute("SELECT COUNT(*) FROM (SELECT problem_id, params_json, source_hash, budget_arch, measured_arch, device_name, COUNT(*) c FROM trials WHERE stage='measure' GROUP BY 1,2,3,4,5,6 HAVING c > 1)").fetchone()[0]
print("duplicate measured trials:", dups)
print("winners:", db.execute("SELECT COUNT(*) FROM winners").fetchone()[0])
print("runs:", db.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
PY
}
echo "== 1. full default sweep, cold cache"
/usr/bin/time -f "wall %e s" "$tuner" sweep --db "$out/tuning.db" --cache-dir "$cache" 2>"$out/sweep_cold.err" | tee "$out/sweep_cold.log"
tail -n 2 "$out/sweep_cold.err"
count_measure "$out/tuning.db"
echo "== 2. the same sweep again"
/usr/bin/time -f "wall %e s" "$tuner" sweep --db "$out/tuning.db" --cache-dir "$cache" 2>"$out/sweep_rerun.err" | tee "$out/sweep_rerun.log" | head -n 3
tail -n 1 "$out/sweep_rerun.err"
count_measure "$out/tuning.db"
echo "== 3. a faulting test-only candidate"
"$tuner" sweep --db "$out/fault.db" --cache-dir "$cache" --batches 8 --test-fault-candidate 2>"$out/sweep_fault.err" | tee "$out/sweep_fault.log" | head -n 3
python3 - "$out/fault.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for params, fate, reason in db.execute("SELECT params_json, fate, reason FROM trials WHERE stage='measure' AND fate != 'measured'"):
    print("non-measured trial:", params, fate, reason[:160])
print("measured:", db.execute("SELECT COUNT(*) FROM trials WHERE stage='measure' AND fate='measured'").fetchone()[0])
PY
