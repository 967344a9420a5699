#!/usr/bin/env bash
# On the CPU machine: builds a diagnostic or experimental `tuner` into .devcarry/bin/tuner_NAME,
# whose kernels see the given macros (defined at the top of templates/sparse_mla_decode/timeline.cuh,
# which every split and combine kernel includes), e.g.
#   SMLA_TIMELINE=100      the per-CTA timeline of launches 100 and 101 (timeline.cuh)
# or an experiment's switch (#ifdef in the templates, taken out again once measured: the
# twenty-third session's SMLA_EXP_Q_AFTER_IDS, _STAGED_OUTPUT, _ROW_FLAGS and _FAST_COMBINE, in
# git history: e406bc6, 97ee647, 015ed7a, 513bf46; the thirty-sixth and thirty-seventh sessions'
# SMLA_EXP_Q_PREFETCH, _Q_REST_EARLY, _HANDOFF_LATE and _Q_AHEAD: 038e307, 6ea1a23; the
# thirty-ninth session's SMLA_EXP_CPASYNC_GATHER and _LANE0_ISSUE: 5b36b90; BENCHMARKS.md
# section 7).
# HOST_PATCH=FILE also applies a patch of the host code for that build (`git apply`, reversed
# after), for an experiment the host must launch differently: the thirty-ninth session's four
# producer warps, `HOST_PATCH=docs/device-logs/s39/producers4_host.patch ... p4` (no macro) and
# `... p4tl SMLA_TIMELINE=100`.
# It edits the header for one build of build/, then restores it and rebuilds, so build/tuner/tuner
# is the tuner's own again. The templates are embedded, so the binary needs nothing else.
# Usage: [HOST_PATCH=FILE] scripts/devcarry_variant_tuner.sh NAME [MACRO[=VALUE] ...]
#        (run devcarry_refresh.sh too)
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: [HOST_PATCH=FILE] scripts/devcarry_variant_tuner.sh NAME [MACRO[=VALUE] ...]}
shift
header=templates/sparse_mla_decode/timeline.cuh
git diff --quiet -- "$header" || { echo "$header has local changes: commit them first" >&2; exit 2; }
patch=${HOST_PATCH:-}
if [ -n "$patch" ]; then
  git apply --check "$patch" || { echo "HOST_PATCH $patch does not apply to this tree" >&2; exit 2; }
  git apply "$patch"
fi
trap '[ -z "$patch" ] || git apply -R "$patch"; git checkout -- "$header"
  cmake --build build --target tuner >/dev/null' EXIT
defines=""
for macro in "$@"; do defines="$defines\n#define ${macro/=/ }"; done
sed -i "s|^#pragma once\$|#pragma once$defines|" "$header"
cmake --build build --target tuner >/dev/null
mkdir -p .devcarry/bin
cp build/tuner/tuner ".devcarry/bin/tuner_$name"
echo "devcarry_variant_tuner: .devcarry/bin/tuner_$name with ${*:-no macro}${patch:+ and $patch}"
