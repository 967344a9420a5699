#!/usr/bin/env python3
"""Regret, measured: how much slower the tuned answer is than the best config at a batch.

An oracle DB holds a sweep of the same problem on the same device in which every config was
measured at every batch it names, all under one protocol: `tuner sweep --db ORACLE --batches ...
--search-margin 1000 --search-keep 100000` (nothing skipped; each config screened with
`--screen-replays N` replays of the L2-safe graph, or timed in full with `--screen-replays 0`), or
`--exhaustive`. Both checks read the configs' first-pass medians there (one pass, so both sides
carry the same noise); an oracle mixing protocols (measure_env) for one problem is refused:

  search   for each batch of the oracle that the searched DB tuned: the searched sweep's winner
           vs the oracle's best at that batch (the batch search's regret);
  bucket   for each batch of the oracle that the tuned DB did NOT tune: the config the tunedb
           lookup returns there (the bucket rule, through the Python module's shape handle) vs the
           oracle's best (the bucket rule's regret).

Usage:
  regret.py search --tuned TUNED.db --oracle ORACLE.db [--max-regret 2] [--min-batches 12]
  regret.py bucket --tuned TUNED.db --oracle ORACLE.db [--max-regret 3] [--min-batches 20]
Prints one row per batch and a last line `<check>: worst regret X% at batch B (N batches)`.
Exit codes: 0 every regret within --max-regret over at least --min-batches batches, 1 some above
it (or fewer batches compared), 2 bad input.
"""
import argparse
import os
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "db" / "python"))


def fail(message):
    print(f"regret.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def connect(path):
    if not os.path.exists(path):
        fail(f"{path} does not exist: pass a tuning store written by `tuner sweep`")
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def oracle_medians(oracle):
    """{(family, shape, budget_arch, device): {batch: {params_json: median_us}}} of measured
    first-pass trials (stage measure), the latest per key, and {key: measure_env}."""
    rows = oracle.execute(
        "SELECT p.family, p.shape, t.budget_arch, t.device_name, p.batch, t.params_json, "
        "t.median_us, t.measure_env FROM trials t JOIN problems p ON p.id = t.problem_id "
        "WHERE t.stage = 'measure' AND t.fate = 'measured' ORDER BY t.id")
    found, envs = {}, {}
    for family, shape, arch, device, batch, params, median, env in rows:
        key = (family, shape, arch, device)
        found.setdefault(key, {}).setdefault(batch, {})[params] = median
        envs.setdefault(key, set()).add(env)
    if not found:
        fail("the oracle DB holds no measured trials: run `tuner sweep --exhaustive` into it")
    for key, seen in envs.items():
        if len(seen) > 1:
            fail(f"the oracle's first passes of {key[0]} {key[1]} mix protocols ({sorted(seen)}): "
                 "sweep the oracle into a fresh DB with one --screen-replays setting")
    return found, {key: next(iter(seen)) for key, seen in envs.items()}


def tuned_winners(tuned, key):
    family, shape, arch, device = key
    rows = tuned.execute(
        "SELECT batch, params_json FROM winners WHERE family = ? AND shape = ? AND "
        "budget_arch = ? AND device_name = ?", (family, shape, arch, device))
    return dict(rows.fetchall())


def row(batch, params, medians, how):
    best_params = min(medians, key=medians.get)
    best = medians[best_params]
    mine = medians.get(params)
    regret = None if mine is None else 100.0 * (mine - best) / best
    shown = "not measured by the oracle" if mine is None else f"{mine:9.2f}"
    print(f"{batch:6d} {how:>16} {shown:>10} {best:9.2f} "
          f"{'-' if regret is None else f'{regret:6.2f}%':>8}  {params}  (oracle best {best_params})")
    return regret


def search_rows(tuned, key, batches):
    winners = tuned_winners(tuned, key)
    rows = []
    for batch, medians in sorted(batches.items()):
        if batch in winners:
            rows.append((batch, winners[batch], medians, "searched winner"))
    return rows


def bucket_rows(tuned_path, tuned, key, batches):
    import tunedb  # the library under test: its lookup decides the config

    family, shape, arch, _ = key
    winners = tuned_winners(tuned, key)
    rows = []
    with tunedb.TuningDb(tuned_path) as db, db.shape(family, arch, shape=shape) as handle:
        for batch, medians in sorted(batches.items()):
            if batch in winners:
                continue
            found = handle.lookup(batch)
            how = f"{found.how} -> {found.tuned_batch}"
            rows.append((batch, found.params_json, medians, how))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("check", choices=["search", "bucket"])
    parser.add_argument("--tuned", required=True, help="the searched tuning store")
    parser.add_argument("--oracle", required=True, help="a store of an exhaustive sweep")
    parser.add_argument("--max-regret", type=float, default=None, help="percent (2 / 3)")
    parser.add_argument("--min-batches", type=int, default=1,
                        help="fail unless at least this many batches were compared")
    args = parser.parse_args()
    limit = args.max_regret if args.max_regret is not None else (2.0 if args.check == "search" else 3.0)
    tuned = connect(args.tuned)
    worst = (None, None)
    count = 0
    print(f"{'batch':>6} {'how':>16} {'tuned_us':>10} {'best_us':>9} {'regret':>8}  config")
    medians, envs = oracle_medians(connect(args.oracle))
    for key, batches in medians.items():
        print(f"# {key[0]} {key[1]} budget {key[2]} on {key[3]}; oracle protocol: "
              f"{envs[key] or 'not recorded'}")
        rows = (search_rows(tuned, key, batches) if args.check == "search"
                else bucket_rows(args.tuned, tuned, key, batches))
        for batch, params, medians, how in rows:
            regret = row(batch, params, medians, how)
            count += 1
            if regret is not None and (worst[0] is None or regret > worst[0]):
                worst = (regret, batch)
    if count == 0:
        fail(f"no batch to compare: the oracle's batches are all {'un' if args.check == 'search' else ''}"
             "tuned in the tuned DB")
    print(f"{args.check}: worst regret {worst[0]:.2f}% at batch {worst[1]} ({count} batches)"
          if worst[0] is not None else f"{args.check}: no config found in the oracle")
    if count < args.min_batches:
        print(f"{args.check}: only {count} batches compared, fewer than --min-batches "
              f"{args.min_batches}")
    sys.exit(0 if worst[0] is not None and worst[0] <= limit and count >= args.min_batches else 1)


if __name__ == "__main__":
    main()
