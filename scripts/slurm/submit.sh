#!/usr/bin/env bash
# Submits a sharded job as a Slurm job array and the merge that depends on it:
#   scripts/slurm/submit.sh sweep|plan --out DIR --shards N [--tasks LIST] [--tuner PATH]
#                           [--partition P] [-- TUNER OPTIONS...]
#   sweep   one GPU per task (--gres=gpu:1): `tuner sweep --shard i/N --db DIR/shard-i.db`
#   plan    CPU only: `tuner plan --shard i/N` for each arch of $TUNER_ARCHS (default
#           "sm_120 sm_90") into DIR/shard-i.db, cubins in DIR/cubins ($TUNER_CACHE)
#   --out DIR     shared by every node (shard DBs, cubin cache, merged.db, logs)
#   --shards N    the N of i/N; every array task i in 1..N does shard i
#   --tasks LIST  submit only these tasks (e.g. 3 or 3,5): re-submits killed ones; the shards
#                 already in DIR stay and the new merge job reads them all
#   after "--": options for tuner (e.g. --family fp8_gemm --batches 1,8,32 --budget-arch sm_120)
# The merge job runs with --dependency=afterok on the array and --kill-on-invalid-dep=yes: if a
# task fails it is cancelled rather than left pending; re-submit the task with --tasks.
# Prints "array JOBID" and "merge JOBID".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '2,17p' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage
kind=$1
shift
case $kind in sweep | plan) ;; *) echo "submit.sh: '$kind' is not sweep or plan" >&2; usage ;; esac
out="" shards="" tasks="" tuner=${TUNER:-$(command -v tuner || true)} partition=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --tuner) tuner=$2; shift 2 ;;
    --partition) partition=(--partition "$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "submit.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[ -n "$out" ] && [ -n "$shards" ] || usage
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: --shards '$shards' is not a positive integer" >&2; exit 2; }
[ -x "$tuner" ] || { echo "submit.sh: no tuner binary: pass --tuner PATH or set TUNER" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
export TUNER=$tuner TUNER_OUT=$out TUNER_SHARDS=$shards TUNER_ARGS="$*"
array=$(sbatch --parsable "${partition[@]}" --array="${tasks:-1-$shards}" --chdir="$out" \
  --export=ALL "$here/${kind}_array.sbatch")
merge=$(sbatch --parsable "${partition[@]}" --dependency="afterok:$array" \
  --kill-on-invalid-dep=yes --chdir="$out" --export=ALL "$here/merge.sbatch")
echo "array $array"
echo "merge $merge"
