#!/usr/bin/env bash
# The fp8_gemm family on a GPU machine (written for the H200): its GPU correctness test, a sweep of
# one DeepSeek-V3 shape, a table of tuned vs default per M with TFLOP/s and GB/s as fractions of
# the H200's fp8 dense peak and of the measured copy bandwidth, the vLLM export, and (FULL=1) a
# short sparse_mla_decode sweep into the same DB, one frozen DB with both families, and look-ups
# of both from the CLI and Python (step "both", after "sweep").
#
# Usage, from the repository root on the GPU machine, binaries built elsewhere and carried; each
# step fits one 10-minute call:
#   BIN=.devcarry/bin bash scripts/device_calls/h200_gemm.sh test     # gpu_fp8_gemm
#   BIN=.devcarry/bin [N=7168 K=4096 BATCHES=1,8,32,128,512] bash scripts/device_calls/h200_gemm.sh sweep
#   BIN=.devcarry/bin bash scripts/device_calls/h200_gemm.sh both     # + smla sweep, freeze, look-ups
# (no argument: test then sweep).
# BIN holds tuner, gpu_fp8_gemm (and libtunedb.so in BIN/../lib for the Python look-up);
# scripts/device_env.sh is sourced when present (finds the machine's NVRTC). Logs and DBs go to
# $OUT (default /tmp/tuner-out)/gemm.
set -u
step=${1:-test+sweep}
bin=${BIN:-.devcarry/bin}
n=${N:-7168}
k=${K:-4096}
batches=${BATCHES:-1,8,32,128,512}
out=${OUT:-/tmp/tuner-out}/gemm
peak_tflops=${PEAK_TFLOPS:-1979}  # H200 SXM fp8 dense (no sparsity), NVIDIA's datasheet
mkdir -p "$out"
cache="$out/cache"
[ -f scripts/device_env.sh ] && . scripts/device_env.sh

if [[ $step == test* ]]; then
  echo "== gpu_fp8_gemm (GPU reference vs CPU fp64; every survivor vs the GPU reference)"
  timeout 540 "$bin/gpu_fp8_gemm" >"$out/gpu_fp8_gemm.log" 2>&1
  echo "rc=$?"; grep -E "checks run|test cases|assertions|ERROR" "$out/gpu_fp8_gemm.log" | head -20
fi
if [[ $step == *sweep ]]; then

echo "== plan (warms the cubin cache), then sweep fp8_gemm N=$n K=$k, batches $batches"
"$bin/tuner" plan --family fp8_gemm --n "$n" --k "$k" --arch sm_90 --cache-dir "$cache" \
  --format csv >"$out/plan_sm90.csv" 2>"$out/plan_sm90.err"; tail -2 "$out/plan_sm90.err"
/usr/bin/time -f "sweep wall %e s" timeout 560 "$bin/tuner" sweep --family fp8_gemm --n "$n" \
  --k "$k" --budget-arch sm_90 --batches "$batches" --db "$out/gemm.db" --cache-dir "$cache" \
  >"$out/sweep.log" 2>"$out/sweep.err"
echo "rc=$?"; tail -1 "$out/sweep.err"; head -3 "$out/sweep.log"

echo "== tuned vs default per M (same run; bound = the larger of the two fractions)"
python3 - "$out/gemm.db" "$n" "$k" "$peak_tflops" <<'PY'
import sqlite3, sys
db, n, k, peak = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
con = sqlite3.connect(db)
rows = con.execute(
    "SELECT w.batch, w.default_median_us, w.median_us, w.decision, w.params_json, w.bytes_moved, "
    "r.copy_bandwidth_gbs FROM winners w JOIN runs r ON r.id = w.run_id "
    "WHERE w.family = 'fp8_gemm' AND w.shape = ? ORDER BY w.batch",
    (f"block=128,k={k},n={n}",)).fetchall()
print(f"{'M':>5} {'default_us':>10} {'tuned_us':>9} {'speedup':>7} {'TFLOP/s':>8} {'%fp8pk':>6} "
      f"{'GB/s':>7} {'%copy':>6} {'bound':>7}  decision / config")
for m, d_us, t_us, decision, params, moved, copy_gbs in rows:
    tflops = 2.0 * m * n * k / (t_us * 1e-6) / 1e12
    gbs = (moved or 0) / (t_us * 1e-6) / 1e9
    pk, cp = 100 * tflops / peak, 100 * gbs / (copy_gbs or float("nan"))
    bound = "compute" if pk >= cp else "memory"
    print(f"{m:>5} {d_us:>10.2f} {t_us:>9.2f} {d_us / t_us:>6.2f}x {tflops:>8.1f} {pk:>5.1f}% "
          f"{gbs:>7.0f} {cp:>5.1f}% {bound:>7}  {decision} {params}")
if not rows:
    print("no fp8_gemm winners recorded: see sweep.err")
PY

echo "== vLLM block-fp8 export"
"$bin/tuner" export --db "$out/gemm.db" --format vllm-json --out "$out/vllm" && \
  head -c 400 "$out"/vllm/N=*.json; echo
fi

if [[ $step == both ]]; then
  echo "== sparse_mla_decode sweep (batches 1,8) into the same DB, one frozen DB, look-ups"
  timeout 400 "$bin/tuner" sweep --budget-arch sm_90 --batches 1,8 --db "$out/gemm.db" \
    --cache-dir "$cache" >"$out/smla_sweep.log" 2>"$out/smla_sweep.err"; echo "rc=$?"
  "$bin/tuner" freeze --db "$out/gemm.db" --out "$out/frozen.db" --arch sm_90 --force \
    --cache-dir "$cache" | tail -1
  "$bin/tuner" query --db "$out/frozen.db" --family fp8_gemm --n "$n" --k "$k" --batch 8
  "$bin/tuner" query --db "$out/frozen.db" --heads 128 --tp 8 --batch 8
  lib=$(ls "$bin"/../lib/libtunedb.so* "$bin"/libtunedb.so* build/db/libtunedb.so* 2>/dev/null | head -n 1)
  TUNEDB_LIBRARY="$lib" PYTHONPATH=db/python python3 -c "
import tunedb, sys
with tunedb.TuningDb('$out/frozen.db') as db:
    g = db.lookup('fp8_gemm', 'sm_90', n=$n, k=$k, block=128, batch=8)
    s = db.lookup('sparse_mla_decode', 'sm_90', local_heads=16, topk=2048, kv_format='fp8_ds_mla',
                  page_size=64, batch=8)
    print('python fp8_gemm:', g.how, g.params, len(g.cubin or b''), 'cubin bytes')
    print('python sparse_mla_decode:', s.how, s.params, len(s.cubin or b''), 'cubin bytes')
"
fi
echo "logs in $out"
