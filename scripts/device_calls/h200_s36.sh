#!/usr/bin/env bash
# Device call of the thirty-sixth session (2026-12-06), one script for whatever card comes:
#   on an H200: the full reference sweep of this tree (`h200_s17.sh sweep`: the default fp8 sweep
#     cold and warm, the --budget-arch sm_120 sweep, the bf16 sweep, `tuner report`; logs in
#     $OUT/s17_sweep.tgz, the DB as reference-sweep.sqlite.gz). Only an H200's figures go into
#     the reference report (an H100's copy bandwidth is 28 % lower: BENCHMARKS.md section 7).
#   on any other card: the GPU tests on this tree's kernels (schedule 2's pairing and divisions
#     of the thirty-third session have been timed and checked by `tuner bench` since, but not
#     through these tests): every gpu_* test but the matrix whole, then the matrix's fp8 16-head
#     part (TUNER_GPU_MATRIX=fp8_ds_mla:4) in the time left; logs in $OUT/s36_tests.tgz.
#   retests (on a card other than an H200, `h200_s36.sh retests`): what call 2 left open:
#     gpu_tunedb_cuda_factors after its fix (the tuner's launch planned with the device's cluster
#     capacity, as the sweep and the launcher plan it), gpu_sweep from its shard-and-merge case
#     on (call 2's 150 s limit stopped it), gpu_sparse_mla_repeat on the fp8 16-head part
#     (likewise; 3 repeats).
#   capture (not on an H200): gpu_capture and gpu_tunedb_cuda_factors after 353822c (launches
#     planned with the kernels' cluster capacity).
#   matrix (not on an H200): the correctness matrix's other parts (fp8 32 and 64 heads, bf16 16 /
#     32 / 64; PARTS to choose) within BUDGET_S (520 s), one process, per-check log back.
#   s2excess (on any card; meant for an H200, where the reference sweep's schedule-2 winners take
#     2-11 % longer a tile than schedule 0's model at the same 264 CTAs, BENCHMARKS.md section 7,
#     thirty-sixth session): per-CTA timelines (.devcarry/bin/tuner_timeline from
#     `scripts/devcarry_variant_tuner.sh timeline SMLA_TIMELINE=100`) of schedule 2 at 92 and 136
#     beside schedule 0 at 88 (264 CTAs of 11 tiles) and 128 (256 of 16). Run on an H100 in the
#     thirty-seventh session (docs/device-logs/s37).
#   qpf (on any card; meant for an H200): the q-prefetch experiment (SMLA_EXP_Q_PREFETCH,
#     q_handoff.cuh; .devcarry/bin/tuner_qpf from `scripts/devcarry_variant_tuner.sh qpf
#     SMLA_EXP_Q_PREFETCH`) against this tree's tuner, best of schedule 0 and of schedule 2 (merge
#     4, the winners' structure) at the batches schedule 2 wins or nearly wins, two rounds;
#     `tuner bench` verifies every config first. Run in the thirty-seventh session (H100: 0.4-1.2 %
#     slower); the switch left the templates with 9e0748d (build the variant from fa05665).
#   probe: on any card but an H200, nothing (asks for an H200 at the cost of a start).
# Usage: scripts/device_calls/h200_s36.sh [tests|retests|capture|matrix|s2excess|qpf|probe]   (carry .devcarry)
set -u
card=$(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | head -n 1)
echo "card: $card"
step=${1:-tests}
if [[ $card == *H200* && $step != s2excess && $step != qpf ]]; then
  BUDGET_S=${BUDGET_S:-570} bash scripts/device_calls/h200_s17.sh sweep
  exit
fi
[ "$step" = probe ] && { echo "no H200: the probe runs nothing here"; exit 0; }
source scripts/device_call_env.sh
call_logs s36 "$step" >/dev/null
export TUNER_BINARY=$PWD/build/tuner/tuner

time_left() { echo $((${BUDGET_S:-$1} - $(date +%s) + began)); }

tests() {
  local test
  for test in gpu_cuda_driver gpu_measure gpu_capture gpu_sparse_mla_whole_rows \
    gpu_sparse_mla_row_errors gpu_sparse_mla_repeat gpu_sweep gpu_fp8_gemm gpu_tunedb_cuda \
    gpu_tunedb_cuda_factors gpu_tunedb_cuda_fp8_gemm; do
    run_gpu_test "$logs/$test.log" 150 "$test"
  done
  matrix_parts "${PARTS:-fp8_ds_mla:4}" "$(time_left 560)"  # PARTS: the matrix's parts after them
}
retests() {
  run_gpu_test "$logs/gpu_tunedb_cuda_factors.log" 120 gpu_tunedb_cuda_factors
  grep -E "MESSAGE: batch|ERROR" "$logs/gpu_tunedb_cuda_factors.log" | cut -c1-160
  run_gpu_test "$logs/gpu_sweep_shard.log" 300 gpu_sweep \
    -tc='--shard*,--devices all*,--batches waves*'
  local left
  left=$(time_left 500)
  TUNER_GPU_MATRIX=fp8_ds_mla:4 TUNER_GPU_REPEATS=3 TUNER_GPU_LOG=$logs/moved.log \
    run_gpu_test "$logs/gpu_sparse_mla_repeat.log" "$((left > 30 ? left : 30))" \
    gpu_sparse_mla_repeat
  grep -E "^(kv|fp8_ds_mla) " "$logs/gpu_sparse_mla_repeat.log"
  head -n 10 "$logs/moved.log" 2>/dev/null | cut -c1-250
}
capture() {  # after 353822c: the two tests that now plan with the capacity
  run_gpu_test "$logs/gpu_capture.log" 120 gpu_capture
  run_gpu_test "$logs/gpu_tunedb_cuda_factors.log" 120 gpu_tunedb_cuda_factors
  grep -hE "MESSAGE: batch|splits per batch|ERROR" "$logs"/*.log | cut -c1-200
}
s2excess() {  # where schedule 2's tiles take longer than schedule 0's at the same CTA count
  source scripts/timeline_step.sh
  export XDG_CACHE_HOME=/tmp/s36_tl
  local s2="$winners,merge=4,schedule=2,target_ctas=128,ctas_per_sm=2" batch
  for batch in 92 136; do timeline_step "$logs" "b${batch}_s2" "$batch" "$s2"; done
  timeline_step "$logs" b88_s0 88 "$winners,merge=4,schedule=0,target_ctas=0,ctas_per_sm=1"
  timeline_step "$logs" b128_s0 128 "$winners,merge=4,schedule=0,target_ctas=256,ctas_per_sm=1"
}
qpf() {  # the q-prefetch experiment (q_handoff.cuh) against this tree's tuner, schedules 2 and 0
  source scripts/bench_ab.sh
  AB_BUILDS="new qpf" AB_LIMIT_S=200 bench_ab_schedules "$logs"
}
case "$step" in
  tests) tests ;;
  s2excess) s2excess ;;
  qpf) qpf ;;
  retests) retests ;;
  capture) capture ;;
  matrix) matrix_parts "${PARTS:-fp8_ds_mla:2,fp8_ds_mla:1,bf16:4,bf16:2,bf16:1}" "$(time_left 520)" \
    -tc='every config*' ;;
  *)
    echo "unknown step '$step': use tests, retests, capture, matrix, s2excess, qpf or probe" >&2
    exit 2
    ;;
esac
tar -C "$out" -czf "$out/s36_$step.tgz" "s36_$step" && rm -rf "$logs"
