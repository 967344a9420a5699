#!/usr/bin/env bash
# On the CPU machine: builds the `tuner` of an earlier commit into .devcarry/bin/tuner_old, for the
# device calls that time an old build against the current one in one run (scripts/device_calls/h200_s9.sh a,
# built from 19fc929, the seventh session's tuner). The templates are embedded, so the binary
# needs nothing from its source tree. The worktree and its build are temporary.
# NAME (default old) names the binary .devcarry/bin/tuner_NAME (bench_ab.sh's AB_BUILDS).
# Usage: scripts/devcarry_old_tuner.sh [REV [NAME]]   (default 19fc929 old; run
# scripts/devcarry_refresh.sh too)
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-19fc929}
name=${2:-old}
tree=$(mktemp -d /tmp/tuner-old-XXXXXX)
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true; rm -rf "$tree"' EXIT
git worktree add --detach "$tree" "$rev" >/dev/null
cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT=/usr/local/cuda \
  >/dev/null
cmake --build "$tree/build" -j"$(nproc)" --target tuner >/dev/null
mkdir -p .devcarry/bin
cp "$tree/build/tuner/tuner" ".devcarry/bin/tuner_$name"
echo "devcarry_old_tuner: .devcarry/bin/tuner_$name from $(git rev-parse --short "$rev")"
