#!/usr/bin/env python3
"""Regret, measured: how much slower the tuned answer is than the best config at a batch.

An oracle DB holds a sweep of the same problem on the same device in which every config was
first measured at every batch it names: `tuner sweep --db ORACLE --batches ... --search-margin
1000 --search-keep 100000` (nothing skipped; each config screened with `--screen-replays N`).
Two protocols can be compared, never mixed across the two sides of a regret:

  full        (default) both sides are full-protocol timings (stage retime: timing protocol 2 in
              full, interleaved rounds) of ONE oracle run: the oracle times its top screens in
              full (`--finalists N --finalist-margin 100`) and, with `--also-time FILE`, the
              tuned side's config at each batch beside them. FILE comes from `also-time` below.
              The oracle's best is the fastest of those full timings.
  first-pass  both sides are the oracle's first passes (stage measure: all screens, or all full
              timings with --screen-replays 0); an oracle mixing protocols there is refused.
              Screens are ~3 % noisy at large batches: use it only for regrets well above that.

Checks:
  search   for each batch of the oracle that the searched DB tuned: the searched sweep's winner
           vs the oracle's best at that batch (the batch search's regret);
  bucket   for each batch of the oracle that the tuned DB did NOT tune: the config the tunedb
           lookup returns there (the bucket rule, through the Python module's shape handle) vs the
           oracle's best (the bucket rule's regret).

Usage:
  regret.py also-time search|bucket --tuned TUNED.db --batches 1,2,... --out FILE
            [--budget-arch sm_90]
      FILE = {"BATCH": [CONFIG]}: the tuned side's config at each of the batches that the check
      compares, for `tuner sweep --also-time FILE` (the oracle sweep)
  regret.py search --tuned TUNED.db --oracle ORACLE.db [--protocol full] [--max-regret 2]
            [--min-batches 12]
  regret.py bucket --tuned TUNED.db --oracle ORACLE.db [--protocol full] [--max-regret 3]
            [--min-batches 20]
Prints the protocol of each side, one row per batch, then `<check>: worst regret X% at batch B
(N batches)` and `<check>: over LIMIT%: B (X%), ...` (or none). A row whose config is not the
oracle's best also gives both timings' p10-p90 and whether they overlap; the batches over the
limit whose ranges overlap are listed once more (within the run's own spread), and still count.
Exit codes: 0 every regret within --max-regret over at least --min-batches batches, 1 some above
it (or fewer batches compared), 2 bad input (including a tuned config the full-protocol oracle
did not time in full: its sweep lacked --also-time).
"""
import argparse
import json
from collections import namedtuple
import os
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "db" / "python"))

STAGES = {"full": "retime", "first-pass": "measure"}
Timed = namedtuple("Timed", "median p10 p90")  # one oracle trial's timing, us
SIDES = {
    "full": "full protocol (timing protocol 2 in full, interleaved rounds; stage retime)",
    "first-pass": "first pass (stage measure)",
}


def fail(message):
    print(f"regret.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def connect(path):
    if not os.path.exists(path):
        fail(f"{path} does not exist: pass a tuning store written by `tuner sweep`")
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def oracle_medians(oracle, protocol):
    """{(family, shape, budget_arch, device): {batch: {params_json: Timed}}} of the oracle's
    measured trials of the protocol's stage, the latest per key, and {key: (measure_env, runs)}."""
    stage = STAGES[protocol]
    rows = oracle.execute(
        "SELECT p.family, p.shape, t.budget_arch, t.device_name, p.batch, t.params_json, "
        "t.median_us, t.p10_us, t.p90_us, t.measure_env, t.run_id FROM trials t JOIN problems p "
        "ON p.id = t.problem_id WHERE t.stage = ? AND t.fate = 'measured' ORDER BY t.id", (stage,))
    found, envs, runs = {}, {}, {}
    for family, shape, arch, device, batch, params, median, p10, p90, env, run in rows:
        key = (family, shape, arch, device)
        found.setdefault(key, {}).setdefault(batch, {})[params] = Timed(median, p10, p90)
        envs.setdefault(key, set()).add(env)
        runs.setdefault(key, set()).add(run)
    if not found:
        how = ("was swept with --finalists 0 or is not an oracle" if protocol == "full"
               else "holds none")
        fail(f"the oracle DB holds no measured trials of stage {stage} ({how}): sweep it with "
             "--finalists N --also-time FILE, or pass --protocol first-pass")
    for key, seen in envs.items():
        if len(seen) > 1:
            fail(f"the oracle's {stage} trials of {key[0]} {key[1]} mix protocols ({sorted(seen)}): "
                 "sweep the oracle into a fresh DB with one --screen-replays setting")
        if protocol == "full" and len(runs[key]) > 1:
            fail(f"the oracle's full-protocol timings of {key[0]} {key[1]} come from runs "
                 f"{sorted(runs[key])}: the two sides must be timed in one run; sweep the oracle "
                 "into a fresh DB")
    return found, {key: (next(iter(envs[key])), sorted(runs[key])) for key in found}


def tuned_winners(tuned, key):
    family, shape, arch, device = key
    rows = tuned.execute(
        "SELECT batch, params_json FROM winners WHERE family = ? AND shape = ? AND "
        "budget_arch = ? AND device_name = ?", (family, shape, arch, device))
    return dict(rows.fetchall())


def overlap(mine, best):
    """Whether the two timings' p10-p90 ranges overlap (None when either lacks them): a regret
    whose sides overlap is within the spread of the run's own timings."""
    if None in (mine.p10, mine.p90, best.p10, best.p90):
        return None
    return mine.p10 <= best.p90 and best.p10 <= mine.p90


def row(batch, params, timings, how):
    best_params = min(timings, key=lambda p: timings[p].median)
    best = timings[best_params]
    mine = timings.get(params)
    regret = None if mine is None else 100.0 * (mine.median - best.median) / best.median
    shown = "not timed by the oracle" if mine is None else f"{mine.median:9.2f}"
    within = None if mine is None or params == best_params else overlap(mine, best)
    spread = ("" if within is None else
              f"  (p10-p90 {mine.p10:.2f}-{mine.p90:.2f} against {best.p10:.2f}-{best.p90:.2f}: "
              f"{'overlapping' if within else 'apart'})")
    print(f"{batch:6d} {how:>16} {shown:>10} {best.median:9.2f} "
          f"{'-' if regret is None else f'{regret:6.2f}%':>8}  {params}  (oracle best "
          f"{best_params} of {len(timings)}){spread}")
    return regret, within


def search_rows(tuned, key, batches):
    winners = tuned_winners(tuned, key)
    return [(batch, winners[batch], medians, "searched winner")
            for batch, medians in sorted(batches.items()) if batch in winners]


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
            rows.append((batch, found.params_json, medians, f"{found.how} -> {found.tuned_batch}"))
    return rows


def rows_for(check, tuned_path, tuned, key, batches):
    return (search_rows(tuned, key, batches) if check == "search"
            else bucket_rows(tuned_path, tuned, key, batches))


def write_also_time(args):
    """The tuned side's config at each requested batch the check compares, as --also-time reads."""
    tuned = connect(args.tuned)
    keys = tuned.execute("SELECT DISTINCT family, shape, budget_arch, device_name FROM winners")
    keys = [key for key in keys.fetchall()
            if args.budget_arch in (None, key[2]) and args.shape in (None, key[1])]
    if len(keys) != 1:
        fail(f"{args.tuned} holds winners of {len(keys)} (family, shape, budget arch, device) "
             f"{'' if args.budget_arch is None else 'for --budget-arch ' + args.budget_arch} "
             f"{'' if args.shape is None else 'for --shape ' + args.shape} "
             f"({keys}); also-time needs exactly one, the oracle sweep's: pick it with "
             "--budget-arch and --shape")
    try:
        batches = sorted({int(b) for b in args.batches.split(",")})
    except ValueError:
        fail(f"--batches {args.batches}: not a comma-separated list of batch sizes")
    empty = {batch: {} for batch in batches}
    rows = rows_for(args.which, args.tuned, tuned, keys[0], empty)
    also = {str(batch): [json.loads(params)] for batch, params, _, _ in rows}
    Path(args.out).write_text(json.dumps(also, indent=1, sort_keys=True) + "\n")
    print(f"also-time {args.which}: {len(also)} of {len(batches)} batches -> {args.out}")


def compare(args):
    limit = args.max_regret if args.max_regret is not None else (2.0 if args.check == "search" else 3.0)
    tuned = connect(args.tuned)
    worst, count, untimed, over, overlapping = (None, None), 0, [], [], []
    medians, envs = oracle_medians(connect(args.oracle), args.protocol)
    print(f"{'batch':>6} {'how':>16} {'tuned_us':>10} {'best_us':>9} {'regret':>8}  config")
    for key, batches in medians.items():
        env, runs = envs[key]
        print(f"# {key[0]} {key[1]} budget {key[2]} on {key[3]}")
        print(f"# protocol: tuned side {SIDES[args.protocol]}; oracle side {SIDES[args.protocol]}; "
              f"oracle run(s) {','.join(map(str, runs))}; {env or 'measure_env not recorded'}")
        for batch, params, by_params, how in rows_for(args.check, args.tuned, tuned, key, batches):
            regret, within = row(batch, params, by_params, how)
            count += 1
            if regret is None:
                untimed.append(batch)
            else:
                if regret > limit:
                    over.append(f"{batch} ({regret:.2f}%)")
                    if within:
                        overlapping.append(str(batch))
                if worst[0] is None or regret > worst[0]:
                    worst = (regret, batch)
    if count == 0:
        fail(f"no batch to compare: the oracle's batches are all {'un' if args.check == 'search' else ''}"
             "tuned in the tuned DB")
    print(f"{args.check}: worst regret {worst[0]:.2f}% at batch {worst[1]} ({count} batches)"
          if worst[0] is not None else f"{args.check}: no tuned config timed by the oracle")
    print(f"{args.check}: over {limit:g}%: {', '.join(over) or 'none'}")
    if overlapping:  # said, never subtracted: the verdict stays the medians'
        print(f"{args.check}: over {limit:g}% with the two sides' p10-p90 overlapping (within the "
              f"run's own spread): {', '.join(overlapping)}")
    if count < args.min_batches:
        print(f"{args.check}: only {count} batches compared, fewer than --min-batches "
              f"{args.min_batches}")
    if untimed and args.protocol == "full":
        fail(f"the tuned config at batch(es) {','.join(map(str, untimed))} has no full-protocol "
             "timing in the oracle: sweep the oracle with --also-time FILE from "
             f"`regret.py also-time {args.check}` (or it failed there: see the oracle's log)")
    sys.exit(0 if worst[0] is not None and worst[0] <= limit and count >= args.min_batches
             and not untimed else 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="check", required=True)
    also = commands.add_parser("also-time", help="write the tuned side's configs for the oracle")
    also.add_argument("which", choices=["search", "bucket"])
    also.add_argument("--tuned", required=True, help="the searched tuning store")
    also.add_argument("--batches", required=True, help="the oracle sweep's batches, e.g. 1,2,4")
    also.add_argument("--out", required=True, help="the --also-time file to write")
    also.add_argument("--budget-arch", help="the tuned DB's budget arch (when it holds several)")
    also.add_argument("--shape", help="the tuned DB's canonical shape (when it holds several)")
    for check in ("search", "bucket"):
        sub = commands.add_parser(check, help=f"the {check} regret")
        sub.add_argument("--tuned", required=True, help="the searched tuning store")
        sub.add_argument("--oracle", required=True, help="a store of an oracle sweep")
        sub.add_argument("--protocol", choices=sorted(STAGES), default="full",
                         help="which timings of the oracle both sides use (never mixed)")
        sub.add_argument("--max-regret", type=float, default=None, help="percent (2 / 3)")
        sub.add_argument("--min-batches", type=int, default=1,
                         help="fail unless at least this many batches were compared")
    args = parser.parse_args()
    if args.check == "also-time":
        write_also_time(args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
