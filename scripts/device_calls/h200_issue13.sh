#!/usr/bin/env bash
# Issue 13 on the H200: serve from a frozen DB with no tuner and no compiler at deploy time.
#   1. a short sweep of the default shape (batches 1, 8, 64, 128) and `tuner freeze` (sm_90);
#   2. gpu_tunedb_cuda with TUNER_REQUIRE_GPU=1 (its own hand-made DB, frozen by `tuner freeze`):
#      launcher vs the reference at batches 1..512 (tuned, bucketed, untuned bf16), eager and
#      graph-replayed on new inputs; a capture of 32 launches with no host allocation and no
#      device allocation / sync (the capture would be invalidated);
#   3. the same binary on the swept DB with --no-skip: the timing case (a winner launched by the
#      launcher within 3 % of its DB median, core/measure's protocol) runs too;
#   4. tests/gpu_tunedb_torch.py on the swept DB: tunedb.torch vs a torch reference, eager and in
#      torch.cuda.graph with replays on new inputs, and the refusals;
#   5. the C example (tunedb_cuda_c_example: the families' records, open, the workspace) and the README's serving snippets in C++
#      (examples/serve/serve.cpp) and Python (examples/serve/serve_torch.py) on the swept DB.
# Usage: scripts/device_calls/h200_issue13.sh BUILD_DIR     (logs under $OUT, default /tmp/tuner-out)
set -u
build=${1:?usage: $0 BUILD_DIR}
out=${OUT:-/tmp/tuner-out}
mkdir -p "$out"
work=$(mktemp -d)
pypath="$PWD/db/python:$PWD/kernels/sparse_mla_decode/python"  # tunedb + the family's typed op
failed=0
declare -A result
step() {  # step NAME LOG COMMAND...: runs it, logs it, remembers the exit code
  local name=$1 log=$2
  shift 2
  "$@" >"$out/$log" 2>&1
  result[$name]=$?
  [ "${result[$name]}" -eq 0 ] || failed=1
  tail -n 4 "$out/$log"
}
step sweep issue13_sweep.log "$build/tuner/tuner" sweep --db "$work/tuning.db" \
  --batches 1,8,64,128 --cache-dir "$work/cache"
step freeze issue13_freeze.log "$build/tuner/tuner" freeze --db "$work/tuning.db" \
  --out "$work/frozen.db" --cache-dir "$work/cache"
cp "$work/frozen.db" "$out/issue13_frozen.db" 2>/dev/null
step gpu_test issue13_gpu_tunedb_cuda.log env TUNER_REQUIRE_GPU=1 TUNER_BINARY="$build/tuner/tuner" \
  ctest --test-dir "$build" -R gpu_tunedb_cuda --output-on-failure
step gpu_swept issue13_gpu_swept.log env TUNER_REQUIRE_GPU=1 TUNEDB_SERVE_DB="$work/frozen.db" \
  "$build/tests/gpu_tunedb_cuda" --no-skip --success=false
grep -h "ratio" "$out/issue13_gpu_swept.log"
step torch issue13_torch.log env TUNEDB_LIBRARY="$build/db/libtunedb.so" \
  TUNEDB_CUDA_LIBRARY="$build/deploy/libtunedb_cuda.so" PYTHONPATH="$pypath" \
  python3 tests/gpu_tunedb_torch.py "$work/frozen.db"
step c_example issue13_c_example.log "$build/deploy/tunedb_cuda_c_example" "$work/frozen.db" \
  sparse_mla_decode "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048" 512
step readme_cpp issue13_readme_cpp.log "$build/deploy/tunedb_serve_example" "$work/frozen.db" \
  1 37 64 512
step readme_py issue13_readme_py.log env TUNEDB_LIBRARY="$build/db/libtunedb.so" \
  TUNEDB_CUDA_LIBRARY="$build/deploy/libtunedb_cuda.so" PYTHONPATH="$pypath" \
  python3 examples/serve/serve_torch.py "$work/frozen.db"
echo
printf '%-10s %s\n' step exit
for name in sweep freeze gpu_test gpu_swept torch c_example readme_cpp readme_py; do
  printf '%-10s %s\n' "$name" "${result[$name]:-not run}"
done
[ "$failed" -eq 0 ] && echo "h200_issue13: OK" || { echo "h200_issue13: FAILED"; exit 1; }
