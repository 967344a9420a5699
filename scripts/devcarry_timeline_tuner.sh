#!/usr/bin/env bash
# On the CPU machine: builds the diagnostic `tuner` whose split and combine kernels print a
# per-CTA timeline (templates/sparse_mla_decode/timeline.cuh) of launch LAUNCH and the next, into
# .devcarry/bin/tuner_timeline. It defines SMLA_TIMELINE in the header for one build of build/,
# then restores the header and rebuilds, so build/tuner/tuner is the tuner's own again.
# Usage: scripts/devcarry_timeline_tuner.sh [LAUNCH]   (default 100; run devcarry_refresh.sh too)
set -euo pipefail
cd "$(dirname "$0")/.."
launch=${1:-100}
header=templates/sparse_mla_decode/timeline.cuh
git diff --quiet -- "$header" || { echo "$header has local changes: commit them first" >&2; exit 2; }
trap 'git checkout -- "$header"; cmake --build build --target tuner >/dev/null' EXIT
sed -i "s|^#pragma once\$|#pragma once\n#define SMLA_TIMELINE $launch|" "$header"
cmake --build build --target tuner >/dev/null
mkdir -p .devcarry/bin
cp build/tuner/tuner .devcarry/bin/tuner_timeline
echo "devcarry_timeline_tuner: .devcarry/bin/tuner_timeline prints launches $launch and $((launch + 1))"
