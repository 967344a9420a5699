#!/usr/bin/env bash
# A real one-node Slurm cluster on localhost (Debian's slurm-wlm + munge, no GPU), started and
# stopped by this script under a temp dir, runs scripts/slurm/submit.sh plan: a job array of
# `tuner plan --shard i/4` for sm_120 and sm_90 (real NVRTC compiles into one shared cubin cache)
# and the dependent merge job. Checks:
#   1. one array task killed while running: the merge job is cancelled (afterok), a manual merge
#      exits 2 naming the missing shard and writes nothing;
#   2. the task re-submitted (--tasks 3) with a new merge job: the merge completes;
#   3. the merged plan equals the unsharded plan fate for fate (and reason for reason), with no
#      config lost or doubled.
# Needs root (slurmd, as CI's container runs it). Fails, never skips, when Slurm or munge is
# missing. Usage: test_slurm_plan.sh TUNER_BINARY REPO_DIR
set -euo pipefail
tuner=$1
repo=$2
shards=4
family=(--family fp8_gemm)  # 100 compile keys per arch: the smallest space of real compiles
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in slurmctld slurmd munged sbatch squeue scancel sinfo sqlite3; do
  command -v "$tool" >/dev/null || PATH=$PATH:/usr/sbin command -v "$tool" >/dev/null ||
    fail "$tool is not installed: install slurm-wlm, munge and sqlite3 (scripts/setup.sh)"
done
export PATH=$PATH:/usr/sbin
[ "$(id -u)" -eq 0 ] || fail "the Slurm test starts slurmd and needs root (CI runs as root)"

tmp=$(mktemp -d /tmp/tuner_slurm_XXXXXX)
chmod 755 "$tmp"
cleanup() {
  for pid_file in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munged.pid"; do
    [ -f "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null || true
  done
  sleep 1
  for pid_file in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munged.pid"; do
    [ -f "$pid_file" ] && kill -9 "$(cat "$pid_file")" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# munge: its own key, socket, pid, log and seed under the temp dir.
mkdir -p "$tmp/munge" && chmod 755 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
socket=$tmp/munge/munge.socket
munged --force --key-file="$tmp/munge/munge.key" --socket="$socket" \
  --pid-file="$tmp/munged.pid" --log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/seed"

# Free ports, so that parallel test runs on one machine do not meet.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
ports = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ports.append(s.getsockname()[1]); s.close()
print(*ports)')
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log"
export SLURM_CONF=$tmp/slurm.conf
cat > "$SLURM_CONF" <<CONF
ClusterName=tuner$$
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MailProg=/bin/true
NodeName=localhost CPUs=2 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -c -f "$SLURM_CONF"
slurmd -N localhost -f "$SLURM_CONF"
for _ in $(seq 60); do
  sinfo -h -o %t 2>/dev/null | grep -q idle && break
  sleep 0.5
done
sinfo -h -o %t | grep -q idle || fail "the Slurm node did not come up: $(cat "$tmp/log/"*.log)"

# Waits until the queue holds none of the given jobs (at most $2 s).
wait_jobs() {
  local jobs=$1 limit=$2 start=$SECONDS
  while squeue -h -j "$jobs" 2>/dev/null | grep -q .; do
    [ $((SECONDS - start)) -lt "$limit" ] || fail "jobs $jobs still queued after $limit s"
    sleep 1
  done
}
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1; }

out=$tmp/out
started=$SECONDS
read -r _ array < <("$repo/scripts/slurm/submit.sh" plan --out "$out" --shards $shards \
  --tuner "$tuner" -- "${family[@]}" | sed -n 1p)
merge_job=$(squeue -h -o "%i %j" | awk '$2 == "tuner-merge" {print $1}')
[ -n "$merge_job" ] || fail "no merge job was queued"
# Kill task 3 while it runs (tasks 1 and 2 take the node's two CPUs first).
for _ in $(seq 1200); do
  [ "$(squeue -h -j "${array}_3" -o %T 2>/dev/null)" = RUNNING ] && break
  sleep 0.1
done
[ "$(squeue -h -j "${array}_3" -o %T)" = RUNNING ] || fail "array task 3 never ran"
scancel --signal=KILL --full "${array}_3"
wait_jobs "$array,$merge_job" 300
[ "$(job_state "$merge_job")" = CANCELLED ] ||
  fail "the merge job ran although task 3 was killed (state $(job_state "$merge_job"))"
[ ! -e "$out/shard-3.db" ] || fail "the killed task left a shard DB"
for i in 1 2 4; do [ -f "$out/shard-$i.db" ] || fail "shard $i did not finish"; done
set +e
"$tuner" merge "$out/merged.db" "$out/shard-1.db" "$out/shard-2.db" "$out/shard-4.db" \
  2>"$tmp/merge.err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "a merge without shard 3 exited $rc, not 2"
grep -q "shard 3/4 of 'plan family=fp8_gemm" "$tmp/merge.err" ||
  fail "the merge did not name the missing shard: $(cat "$tmp/merge.err")"
[ ! -e "$out/merged.db" ] || fail "a refused merge wrote merged.db"

# Re-submit the killed task; the new merge job reads all four shards.
read -r _ array2 < <("$repo/scripts/slurm/submit.sh" plan --out "$out" --shards $shards \
  --tasks 3 --tuner "$tuner" -- "${family[@]}" | sed -n 1p)
merge2=$(squeue -h -o "%i %j" | awk '$2 == "tuner-merge" {print $1}')
wait_jobs "$array2${merge2:+,$merge2}" 300
[ "$(job_state "$merge2")" = COMPLETED ] || fail "the merge job did not complete: $(cat "$out"/tuner-merge-*.out)"
grep -q "complete: 4/4 shards of 'plan family=fp8_gemm shape=block=128,k=4096,n=7168 arch=sm_120'" \
  "$out/tuner-merge-$merge2.out" || fail "merge output: $(cat "$out/tuner-merge-$merge2.out")"
grep -q "complete: 4/4 shards of 'plan family=fp8_gemm shape=block=128,k=4096,n=7168 arch=sm_90'" \
  "$out/tuner-merge-$merge2.out" || fail "merge output: $(cat "$out/tuner-merge-$merge2.out")"
echo "slurm: arrays + merge in $((SECONDS - started)) s"

# The unsharded plan (from the cubin cache the shards filled) against the merge, row by row.
for arch in sm_120 sm_90; do
  "$tuner" plan --arch "$arch" "${family[@]}" --db "$tmp/full.db" --format csv \
    --cache-dir "$out/cubins" >/dev/null 2>&1
done
fates="SELECT budget_arch, params_json, fate, reason FROM trials WHERE stage = 'plan' ORDER BY 1, 2"
sqlite3 "$tmp/full.db" "$fates" >"$tmp/full.txt"
sqlite3 "file:$out/merged.db?mode=ro" "$fates" >"$tmp/merged.txt"
[ "$(wc -l <"$tmp/full.txt")" -eq 864 ] || fail "the unsharded plan has $(wc -l <"$tmp/full.txt") rows, not 2 x 432"
diff "$tmp/full.txt" "$tmp/merged.txt" >"$tmp/fates.diff" ||
  fail "merged plan differs from the unsharded plan: $(head -20 "$tmp/fates.diff")"
survivors=$(grep -c '|survivor|' "$tmp/merged.txt")
[ "$survivors" -gt 0 ] || fail "no survivor: the compiles did not run"
echo "ok: merged plan of $shards shards = unsharded plan, $(wc -l <"$tmp/merged.txt") fates ($survivors survivors), killed task re-submitted; $((SECONDS - started)) s"
