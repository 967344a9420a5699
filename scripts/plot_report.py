#!/usr/bin/env python3
"""Plots of a tuning DB for `tuner report`, one pair of PNGs per series (family shape, budget arch,
device):

  time_vs_batch_<slug>.png  time vs batch (log x) of the winner at each tuned batch, the best
                            measured config, the default, and the bandwidth bound (bytes moved /
                            copy bandwidth); bars: the configs the batch search skipped there;
  heatmap_<slug>.png        each config's time relative to the best at each batch; configs sorted
                            by their geometric-mean relative time, the best ~40 shown.

Scope as in tuner/report.hpp: with --run, that run's winners and trials; without, the current
winners and the latest measured trial per (problem, params, archs, device).

Runs under the python3 it is started with; when that one has no matplotlib it re-runs itself
once under /usr/bin/python3 (where Debian's python3-matplotlib lives).

Exit codes: 0 plotted, 2 bad input (missing DB, unknown run, nothing to plot), 3 no matplotlib.
"""
import argparse
import json
import math
import os
import re
import sqlite3
import sys

NO_MATPLOTLIB = 3
HEATMAP_ROWS = 40


def fail(message, code=2):
    print(f"plot_report.py: error: {message}", file=sys.stderr)
    sys.exit(code)


def series_slug(key):
    family, shape, budget, device = key
    slug = f"{family}-{shape}-{budget}-{device}"
    return re.sub(r"[^A-Za-z0-9_-]", "_", slug)


def describe(key):
    family, shape, budget, device = key
    # Budget arch (whose limits pruned) and the device that measured: never read as one thing.
    return f"{family} {shape}; pruned for {budget}, timed on {device}"


def compact_params(params_json):
    parts = []
    for name, value in sorted(json.loads(params_json).items()):
        initials = "".join(word[:1] for word in name.split("_") if word)
        parts.append(f"{initials}{value}")
    return " ".join(parts) or "{}"


def open_db(path):
    if not os.path.isfile(path):
        fail(f"--db {path}: no such file; pass the tuning DB that `tuner sweep --db` wrote")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.execute("SELECT COUNT(*) FROM runs").fetchone()
    except sqlite3.DatabaseError as error:
        fail(f"--db {path}: not a tuning DB ({error})")
    return db


def load(db, run_id, family):
    runs = {row[0]: row[1] for row in db.execute("SELECT id, copy_bandwidth_gbs FROM runs")}
    if run_id is not None and run_id not in runs:
        fail(f"run {run_id} is not in the DB (it holds runs {sorted(runs) or 'none'}); pass one of those")
    winner_sql = (
        "SELECT family, shape, budget_arch, device_name, "
        "batch, params_json, median_us, default_params_json, default_median_us, bytes_moved, run_id "
        "FROM winners WHERE (?1 IS NULL OR family = ?1) AND (?2 IS NULL OR run_id = ?2)")
    winners = {}
    for row in db.execute(winner_sql, (family, run_id)):
        key, batch = tuple(row[:4]), row[4]
        winners[(key, batch)] = {
            "params": row[5], "median_us": row[6], "default_params": row[7],
            "default_us": row[8], "bytes_moved": row[9], "copy_gbs": runs.get(row[10]),
        }
    trial_sql = (
        "SELECT t.id, p.family, p.shape, "
        "t.budget_arch, t.device_name, p.batch, t.params_json, t.median_us, t.bytes_moved, t.run_id, "
        "t.problem_id, t.measured_arch FROM trials t JOIN problems p ON p.id = t.problem_id "
        "WHERE t.stage = 'measure' AND t.fate = 'measured' AND t.median_us > 0 AND p.batch > 0 "
        "AND (?1 IS NULL OR p.family = ?1) AND (?2 IS NULL OR t.run_id = ?2) ORDER BY t.id")
    latest = {}
    for row in db.execute(trial_sql, (family, run_id)):
        # A later trial of the same config replaces an earlier one (rows come by id).
        latest[(row[10], row[6], row[3], row[11], row[4])] = row
    trials = {}
    for row in latest.values():
        key, batch = tuple(row[1:5]), row[5]
        trials.setdefault(key, {}).setdefault(batch, {})[row[6]] = {
            "median_us": row[7], "bytes_moved": row[8], "copy_gbs": runs.get(row[9]),
        }
    return winners, trials


def load_skipped(db, run_id, family):
    """{key: {batch: configs recorded skipped_by_search}} (none in stores before schema 3)."""
    sql = (
        "SELECT p.family, p.shape, t.budget_arch, t.device_name, p.batch, "
        "COUNT(DISTINCT t.params_json) FROM trials t JOIN problems p ON p.id = t.problem_id "
        "WHERE t.fate = 'skipped_by_search' AND (?1 IS NULL OR p.family = ?1) "
        "AND (?2 IS NULL OR t.run_id = ?2) GROUP BY 1, 2, 3, 4, 5")
    skipped = {}
    for row in db.execute(sql, (family, run_id)):
        skipped.setdefault(tuple(row[:4]), {})[row[4]] = row[5]
    return skipped


def draw_skipped(axes, batches, skipped):
    """Bars on a second y axis: how many configs the batch search left unmeasured per batch."""
    if not skipped:
        return
    counts = [skipped.get(b, 0) for b in batches]
    bars = axes.twinx()
    bars.bar(batches, counts, width=[b * 0.12 for b in batches], color="tab:gray", alpha=0.25,
             label="configs skipped by the search")
    bars.set_ylabel("configs skipped by the batch search")
    bars.legend(loc="lower right", fontsize=7)


def batch_ticks(axes, batches):
    """Every batch when few; powers of two when many (51 CUDA-graph sizes would overlap)."""
    ticks = batches if len(batches) <= 16 else [b for b in batches if b & (b - 1) == 0]
    axes.set_xticks(ticks)
    axes.set_xticklabels([str(b) for b in ticks])


def time_vs_batch(plt, key, winners, batch_trials, out_path, skipped=None):
    batches = sorted(set(batch_trials) | {b for (k, b) in winners if k == key})
    series = {"winner": [], "best measured": [], "default": [], "bandwidth bound": []}
    for batch in batches:
        winner = winners.get((key, batch))
        configs = batch_trials.get(batch, {})
        best = min((c["median_us"] for c in configs.values()), default=None)
        default_params = winner["default_params"] if winner else None
        default_us = winner["default_us"] if winner else None
        if default_us is None and default_params in configs:
            default_us = configs[default_params]["median_us"]
        bytes_moved, copy_gbs = None, None
        if winner and winner["bytes_moved"]:
            bytes_moved, copy_gbs = winner["bytes_moved"], winner["copy_gbs"]
        elif configs:
            fastest = min(configs.values(), key=lambda c: c["median_us"])
            bytes_moved, copy_gbs = fastest["bytes_moved"], fastest["copy_gbs"]
        bound = bytes_moved / (copy_gbs * 1e3) if bytes_moved and copy_gbs else None
        for name, value in (("winner", winner["median_us"] if winner else None),
                            ("best measured", best), ("default", default_us),
                            ("bandwidth bound", bound)):
            series[name].append(value)
    figure, axes = plt.subplots(figsize=(8, 5))
    styles = {"winner": "o-", "best measured": "x:", "default": "s--", "bandwidth bound": "k-."}
    for name, values in series.items():
        points = [(b, v) for b, v in zip(batches, values) if v is not None]
        if points:
            axes.plot([p[0] for p in points], [p[1] for p in points], styles[name], label=name)
    axes.set_xscale("log", base=2)
    draw_skipped(axes, batches, skipped or {})
    batch_ticks(axes, batches)
    axes.set_xlabel("batch size (points: tuned batches)")
    axes.set_ylabel("time per call (µs)")
    axes.set_title(describe(key), fontsize=8)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(out_path, dpi=120)
    plt.close(figure)


def heatmap(plt, key, batch_trials, out_path):
    batches = sorted(batch_trials)
    best = {b: min(c["median_us"] for c in batch_trials[b].values()) for b in batches}
    configs = sorted({p for b in batches for p in batch_trials[b]})
    relative = {p: [batch_trials[b][p]["median_us"] / best[b] if p in batch_trials[b] else None
                    for b in batches] for p in configs}

    def geomean(values):
        present = [v for v in values if v is not None]
        return math.exp(sum(math.log(v) for v in present) / len(present))

    ranked = sorted(configs, key=lambda p: geomean(relative[p]))[:HEATMAP_ROWS]
    grid = [[math.nan if v is None else v for v in relative[p]] for p in ranked]
    finite = sorted(v for row in grid for v in row if not math.isnan(v))
    vmax = max(1.05, finite[int(0.95 * (len(finite) - 1))]) if finite else 2.0
    height = 1.5 + 0.22 * len(ranked)
    figure, axes = plt.subplots(figsize=(max(6, 1.0 + 0.7 * len(batches)) + 3, height))
    image = axes.imshow(grid, aspect="auto", cmap="viridis_r", vmin=1.0, vmax=vmax,
                        interpolation="nearest")
    axes.set_xticks(range(len(batches)))
    axes.set_xticklabels([str(b) for b in batches])
    axes.set_yticks(range(len(ranked)))
    axes.set_yticklabels([compact_params(p) for p in ranked], fontsize=7)
    axes.set_xlabel("batch size")
    for row, values in enumerate(grid):
        for column, value in enumerate(values):
            if not math.isnan(value):
                axes.text(column, row, f"{value:.2f}", ha="center", va="center", fontsize=5,
                          color="white" if value > (1.0 + vmax) / 2 else "black")
    axes.set_title(f"time / best at each batch ({len(ranked)} of {len(configs)} configs, "
                   f"by geometric mean)\n{describe(key)}", fontsize=8)
    figure.colorbar(image, ax=axes, label="relative time (1.00 = best)")
    figure.tight_layout()
    figure.savefig(out_path, dpi=120)
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="the tuning DB (SQLite)")
    parser.add_argument("--out", required=True, help="directory for the PNGs")
    parser.add_argument("--run", type=int, help="only this run's winners and trials")
    parser.add_argument("--family", help="only this kernel family")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        system_python = "/usr/bin/python3"
        # A python3 first on PATH (pyenv, venv) may lack the matplotlib that Debian's
        # python3-matplotlib installed for the system interpreter: try that one once.
        if (os.path.isfile(system_python) and not os.environ.get("PLOT_REPORT_SYSTEM_PYTHON")
                and os.path.realpath(sys.executable) != os.path.realpath(system_python)):
            os.environ["PLOT_REPORT_SYSTEM_PYTHON"] = "1"
            os.execv(system_python, [system_python, os.path.abspath(__file__)] + sys.argv[1:])
        fail(f"matplotlib is not available ({error}): install python3-matplotlib", NO_MATPLOTLIB)
    db = open_db(args.db)
    winners, trials = load(db, args.run, args.family)
    skipped = load_skipped(db, args.run, args.family)
    keys = sorted(set(trials) | {k for (k, _) in winners})
    if not keys:
        fail("the DB holds no winners and no measured trials in this scope: nothing to plot")
    os.makedirs(args.out, exist_ok=True)
    for key in keys:
        slug = series_slug(key)
        batch_trials = trials.get(key, {})
        path = os.path.join(args.out, f"time_vs_batch_{slug}.png")
        time_vs_batch(plt, key, winners, batch_trials, path, skipped.get(key))
        print(f"wrote {path}")
        if batch_trials:
            path = os.path.join(args.out, f"heatmap_{slug}.png")
            heatmap(plt, key, batch_trials, path)
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
