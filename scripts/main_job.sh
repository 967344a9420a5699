#!/usr/bin/env bash
# The main job on the default problem (the seeds' sparse MLA decode: 64 heads, TP 4, topk 2048,
# fp8 KV): with a GPU, sweep every batch size into tuning.db and print the winners; without one,
# print the sm_120 plan (every config's fate) and say why.
# Usage: scripts/main_job.sh [BUILD_DIR] [DB]
set -uo pipefail
cd "$(dirname "$0")/.."
tuner="${1:-build}/tuner/tuner"
db=${2:-tuning.db}
"$tuner" sweep --db "$db"
status=$?
if [ $status -eq 3 ]; then
  echo "main job: no GPU on this machine (see the message above), so no timing is possible;" \
       "showing the sm_120 plan of the default problem instead."
  exec "$tuner" plan --arch sm_120 --heads 64 --tp 4
fi
exit $status
