#!/usr/bin/env bash
# On the CPU machine: reduces the per-check logs of the GPU correctness matrix (TUNER_GPU_LOG of
# gpu_sparse_mla_decode: one PASS/FAIL line per config x shape) to one line per row (KV format,
# heads, batch, topk): checks passed and failed, the largest out and lse errors, the checks per
# merge value; then, per merge value over all rows, the largest and the mean out error. The
# per-check logs (megabytes) stay out of git; this summary goes into docs/device-logs.
# A log ending in .gz is read through zcat.
# Usage: scripts/checks_summary.sh CHECKS_LOG...
set -euo pipefail
[ $# -gt 0 ] || set -- /dev/stdin  # no log named: the per-check lines on stdin
for log in "$@"; do
  case "$log" in
    *.gz) zcat -- "$log" ;;
    *) cat -- "$log" ;;
  esac
done | awk '
/^(PASS|FAIL)/ {
  for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
  key = v["kv"] " " v["heads"] " " v["batch"] " " v["topk"]
  if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  merge = v["merge"]
  if ($1 == "PASS") pass[key]++; else { fail[key]++; merge_fail[merge]++ }
  for (i = 1; i < NF; i++) {
    if ($i == "out" && $(i + 1) == "rel") {
      e = $(i + 3) + 0
      if (e > max_out[key]) max_out[key] = e
      if (e > merge_max[merge]) merge_max[merge] = e
      merge_sum[merge] += e
    }
    if ($i == "lse" && $(i + 1) == "rel" && $(i + 3) + 0 > max_lse[key]) max_lse[key] = $(i + 3) + 0
  }
  by_merge[key, merge]++
  merge_checks[merge]++
}
END {
  print "kv heads batch topk passed failed max_out max_lse checks_by_merge(0/1/2/3/4/5)"
  for (k = 1; k <= n; k++) {
    key = order[k]
    printf "%s %d %d %.2e %.2e %d/%d/%d/%d/%d/%d\n", key, pass[key], fail[key], max_out[key],
           max_lse[key], by_merge[key, 0], by_merge[key, 1], by_merge[key, 2], by_merge[key, 3],
           by_merge[key, 4], by_merge[key, 5]
  }
  print "merge checks failed max_out mean_out"
  for (m = 0; m <= 5; m++) {
    if (merge_checks[m] == 0) continue
    printf "%d %d %d %.2e %.2e\n", m, merge_checks[m], merge_fail[m], merge_max[m],
           merge_sum[m] / merge_checks[m]
  }
}'
