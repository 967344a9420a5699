#!/usr/bin/env bash
# H200, owed from the fourteenth session (code of that session, not yet run on a GPU):
#   merge  merge 3 (the last-CTA merge, last_cta_merge.cuh) against merges 1 and 2 on the winners'
#          structure (`tuner bench`, batches 1-512, the fastest launch per merge value and batch),
#          then the repeat test of the 16-head part (launch variant 3 is merge 3) x 8;
#   matrix the GPU reference against the CPU fp64 one, the check that the device judgment agrees
#          with the host's (gpu_sparse_mla_row_errors),
#          then the correctness matrix on the fenced kernel, judged on the device (1cc440b), part by
#          part (every compile key x launch variant at batch {1, 7, 64, 128} x topk {2048, 600,
#          5}); a part stopped by its limit says so ("rc=124") and the rows it printed stand.
#          Further arguments name the parts (default: all six), each FORMAT:TP[@BATCHES], e.g.
#          bf16:1@1,7,128 (the matrix's batches 1,7,64,128 unless named).
# Usage: BUDGET_S=560 scripts/device_calls/h200_s15.sh merge|matrix [FORMAT:TP[@BATCHES] ...]   (carry .devcarry; $OUT/s15)
step=${1:?usage: scripts/device_calls/h200_s15.sh merge|matrix [PART ...]}
shift
source scripts/device_call_env.sh
logs=$out/s15
mkdir -p "$logs"
left() { echo $((${BUDGET_S:-560} - $(date +%s) + began)); }

case $step in
  merge)
    where="block_h=16,block_t=64,num_stages=2,kv_unpack=0,ctas_per_sm=1,mma_path=1,num_warps=4"
    for round in 1 2; do
      XDG_CACHE_HOME=/tmp/s15_cache timeout 150 build/tuner/tuner bench \
        --batches 1,8,32,64,128,256,512 --where "$where,producers=2,merge=1|2|3" --no-default \
        --best-per merge >"$logs/bench_$round.log" 2>&1
      echo "bench round $round rc=$? at $(($(date +%s) - began)) s"
    done
    TUNER_GPU_MATRIX=fp8_ds_mla:4 TUNER_GPU_LOG=$logs/moved_fp8_4.log \
      timeout "$(($(left) - 20))" build/tests/gpu_sparse_mla_repeat >"$logs/repeat_fp8_4.log" 2>&1
    echo "repeat fp8:4 x8 rc=$? $(grep -E '^fp8_ds_mla ' "$logs/repeat_fp8_4.log" | tr -s ' ')"
    head -n 10 "$logs/moved_fp8_4.log" 2>/dev/null | cut -c1-250
    for f in "$logs"/bench_*.log; do
      echo "== $f"; grep -E "^ +[0-9]+ .*merge=" "$f" | awk '{print $1, $10, $11, $13}' | tr '\n' ';'
      echo
    done
    ;;
  matrix)
    parts=("$@")
    [ ${#parts[@]} -gt 0 ] || parts=(fp8_ds_mla:4 bf16:4 fp8_ds_mla:2 bf16:2 fp8_ds_mla:1 bf16:1)
    # The parts' cubins compiled on the CPU machine (scripts/devcarry_matrix_cubins.sh), when
    # carried: the matrix loads them instead of compiling (seventeenth session).
    if [ -f .devcarry/matrix_cubins.tar.xz ]; then
      mkdir -p /tmp/s15_cubins && tar -C /tmp/s15_cubins -xJf .devcarry/matrix_cubins.tar.xz &&
        export TUNER_GPU_CUBIN_CACHE=/tmp/s15_cubins/cubins
      echo "matrix cubins: ${TUNER_GPU_CUBIN_CACHE:-not unpacked}"
    fi
    # The reference first (rewritten in the sixteenth session: a warp per token's scores), then
    # the device judgment against the host comparison.
    build/tests/gpu_sparse_mla_decode -tc="the GPU reference agrees*" >"$logs/reference.log" 2>&1
    echo "reference vs CPU fp64 rc=$? $(grep -E 'test cases' "$logs/reference.log" | tail -n 1)"
    build/tests/gpu_sparse_mla_row_errors >"$logs/row_errors.log" 2>&1
    echo "row_errors rc=$? $(grep -E 'test cases' "$logs/row_errors.log" | tail -n 1)"
    for part in "${parts[@]}"; do
      remaining=$(left)
      [ "$remaining" -gt 60 ] || { echo "$part: not run (${remaining} s left)"; continue; }
      format_tp=${part%%@*}
      batches=1,7,64,128
      [ "$format_tp" = "$part" ] || batches=${part#*@}
      name=${part//[:@,]/_}
      TUNER_GPU_MATRIX=$format_tp TUNER_GPU_MATRIX_BATCHES=$batches \
        TUNER_GPU_LOG=$logs/checks_$name.log timeout "$((remaining - 20))" \
        build/tests/gpu_sparse_mla_decode -tc="every config*" >"$logs/matrix_$name.log" 2>&1
      echo "$part rc=$? at $(($(date +%s) - began)) s"
    done
    grep -h "from the cubin cache" "$logs"/matrix_*.log | sed 's/.*MESSAGE: //'
    grep -h "FAIL \|ERROR\|CRASHED" "$logs"/matrix_*.log | head -n 20 | cut -c1-300
    grep -hE "^(fp8_ds_mla|bf16) " "$logs"/matrix_*.log
    ;;
  *) echo "unknown step '$step': use merge or matrix" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/s15_$step.tgz" s15 && rm -rf "$logs"
