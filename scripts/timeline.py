#!/usr/bin/env python3
"""Summarizes the per-CTA timeline lines ("TL split ..." / "TL combine ...") that the diagnostic
tuner (scripts/devcarry_variant_tuner.sh, templates/sparse_mla_decode/timeline.cuh) prints for two
consecutive launches: where a launch's time goes, in microseconds from its first split CTA's start.
  ramp     the CTA's start -> its first tile landed (ids, then the first bulk copies)
  stream   first tile landed -> last tile landed
  drain    last tile landed -> its softmax and P.V done
  epilogue done -> output / partial written (and any in-kernel merge); in logs with the two
           epilogue marks, split into the row sums' gather, the trigger and the writes
and per SM the time its last CTA wrote; then the combine (its CTAs' start, past their wait, end)
and the gap to the next launch's split.
Usage: timeline.py LOG [LOG ...]   (LOG may be gzipped: NAME.gz)"""
import collections
import gzip
import statistics
import sys

SPLIT_MARKS = ["entry", "ids_loaded", "issued0", "q_ready", "first_full", "last_full", "issued_last",
               "computed", "written"]
# Logs from the thirty-first session on carry two more: the epilogue's row sums and trigger.
SPLIT_MARKS_EPILOGUE = SPLIT_MARKS + ["row_sums", "dependents"]
# From the thirty-fifth session on, one more: the last producer thread's first copies issued.
SPLIT_MARKS_ISSUE = SPLIT_MARKS_EPILOGUE + ["issued0_all"]
# From the thirty-seventh session on, the CTA's first row crossing where the producers hand q
# over (timeline.cuh's kCross* marks; 0 in CTAs without one).
SPLIT_MARKS_CROSS = SPLIT_MARKS_ISSUE + [
    "cross_last_full", "cross_computed", "cross_written", "cross_q_full", "cross_done0",
    "cross_done1", "cross_q_free", "cross_q_stored", "cross_issued_next"]
# From the thirty-eighth session on, two more of that crossing: the producers' next tile's staged
# ids read, and past that tile's stage wait.
SPLIT_MARKS_CROSS_WAITS = SPLIT_MARKS_CROSS + ["cross_ids_taken", "cross_stage_free"]
# And the same three producer steps at the CTA's fifth tile (timeline.cuh's kMidTile), to compare.
SPLIT_MARKS_MID = SPLIT_MARKS_CROSS_WAITS + ["mid_ids_taken", "mid_stage_free", "mid_issued"]
SPLIT_LENGTHS = (len(SPLIT_MARKS), len(SPLIT_MARKS_EPILOGUE), len(SPLIT_MARKS_ISSUE),
                 len(SPLIT_MARKS_CROSS), len(SPLIT_MARKS_CROSS_WAITS), len(SPLIT_MARKS_MID))


def parse(paths):
    split = collections.defaultdict(list)
    combine = collections.defaultdict(list)
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        for line in opener(path, "rt", errors="replace"):
            fields = line.split()
            if len(fields) < 8 or fields[0] != "TL":
                continue
            launch, sm = int(fields[2]), int(fields[7])
            stamps = [int(v) for v in fields[8:]]
            if fields[1] == "split" and len(stamps) in SPLIT_LENGTHS:
                marks = dict(zip(SPLIT_MARKS_MID, stamps))
                marks["block"] = tuple(int(v) for v in fields[3:6])  # blockIdx x, y, z
                split[launch].append((sm, marks))
            elif fields[1] == "combine" and len(stamps) == 3:
                combine[launch].append((sm, dict(zip(["entry", "waited", "end"], stamps))))
    return split, combine


def spread(values):
    values = sorted(values)
    if not values:
        return "-"
    p10 = values[len(values) // 10]
    p90 = values[(len(values) * 9) // 10]
    return (f"min {values[0]:7.2f}  p10 {p10:7.2f}  median {statistics.median(values):7.2f}  "
            f"p90 {p90:7.2f}  max {values[-1]:7.2f}")


def us(ns):
    return ns / 1000.0


def print_placement(ctas, per_sm):
    """Which CTAs the block scheduler put together: on the SMs holding two, the gap between their
    linear CTA indices (x fastest), most common first. schedule.h's division_cta expects a wave of
    N CTAs at two an SM to pair CTAs c and c + N / 2."""
    width = max(m["block"][0] for _, m in ctas) + 1
    height = max(m["block"][1] for _, m in ctas) + 1
    by_sm = collections.defaultdict(list)
    for sm, m in ctas:
        x, y, z = m["block"]
        by_sm[sm].append((z * height + y) * width + x)
    gaps = collections.Counter(abs(a - b) for a, b in
                               (indices for indices in by_sm.values() if len(indices) == 2))
    if gaps:
        common = ", ".join(f"{gap} on {count}" for gap, count in gaps.most_common(3))
        print(f"  {'SMs holding 2: CTA index gap (N/2 = ' + str((len(ctas) + 1) // 2) + ')':<44} "
              f"{common} of {sum(gaps.values())} SMs")


def print_mid_tile(ctas):
    """The producers' fifth tile (CTAs with one): its ids read -> past its stage's wait -> its
    copies issued, beside the crossing's same steps."""
    mid = [m for _, m in ctas if m.get("mid_issued", 0) > 0]
    if not mid:
        return
    print(f"  producers' fifth tile ({len(mid)} CTAs)")
    for name, a, b in [("ids taken -> stage free", "mid_ids_taken", "mid_stage_free"),
                       ("stage free -> copies issued", "mid_stage_free", "mid_issued")]:
        print(f"    {name:<42} {spread([us(m[b] - m[a]) for m in mid])}")


def print_crossings(ctas):
    """The first row crossing of the CTAs that have one (q handed over by the producers), from the
    old row's last tile landing, and how much later such a CTA wrote its output than the other
    CTA of its SM where that one crossed no row."""
    crossing = [(sm, m) for sm, m in ctas if m.get("cross_computed", 0) > 0]
    if not crossing:
        return
    steps = [("last tile landed -> computed", "cross_last_full", "cross_computed"),
             ("computed -> old row written", "cross_computed", "cross_written"),
             ("written -> past q_full", "cross_written", "cross_q_full"),
             ("producers past q_free (from landed)", "cross_last_full", "cross_q_free"),
             ("producers' q_free -> q stored", "cross_q_free", "cross_q_stored"),
             ("q stored -> next copies issued", "cross_q_stored", "cross_issued_next"),
             ("  of it q stored -> next ids taken", "cross_q_stored", "cross_ids_taken"),
             ("  of it next ids taken -> stage free", "cross_ids_taken", "cross_stage_free"),
             ("  of it stage free -> copies issued", "cross_stage_free", "cross_issued_next"),
             ("past q_full -> new row's tile 0 done", "cross_q_full", "cross_done0"),
             ("tile 0 done -> tile 1 done", "cross_done0", "cross_done1")]
    print(f"  crossing: {len(crossing)} CTAs cross a row with the q handoff")
    for name, a, b in steps:
        values = [us(m[b] - m[a]) for _, m in crossing if m.get(a, 0) > 0 and m.get(b, 0) > 0]
        print(f"    x {name:<40} {spread(values)}")
    by_sm = collections.defaultdict(list)
    for sm, m in ctas:
        by_sm[sm].append(m)
    later = [us(a["written"] - b["written"]) for pair in by_sm.values() if len(pair) == 2
             for a, b in (pair, pair[::-1])
             if a.get("cross_computed", 0) > 0 and b.get("cross_computed", 0) == 0]
    if later:
        label = "written after its SM's other CTA (no crossing)"
        print(f"    x {label:<40} {spread(later)}")


def summarize(launch, ctas, combine, next_start):
    t0 = min(m["entry"] for _, m in ctas)
    print(f"launch {launch}: {len(ctas)} split CTAs on {len({sm for sm, _ in ctas})} SMs")
    rows = [
        ("start (from the first CTA's)", [us(m["entry"] - t0) for _, m in ctas]),
        ("ramp: start -> first tile landed", [us(m["first_full"] - m["entry"]) for _, m in ctas]),
        ("  of it start -> first ids loaded", [us(m["ids_loaded"] - m["entry"]) for _, m in ctas]),
        ("  of it start -> first copies issued", [us(m["issued0"] - m["entry"]) for _, m in ctas]),
        ("  q ready (from start)", [us(m["q_ready"] - m["entry"]) for _, m in ctas]),
    ]
    if all("issued0_all" in m for _, m in ctas):
        rows += [("  of it start -> last producer's first copies",
                  [us(m["issued0_all"] - m["entry"]) for _, m in ctas])]
    rows += [
        ("stream: first -> last tile landed", [us(m["last_full"] - m["first_full"]) for _, m in ctas]),
        ("drain: last landed -> computed", [us(m["computed"] - m["last_full"]) for _, m in ctas]),
        ("epilogue: computed -> written", [us(m["written"] - m["computed"]) for _, m in ctas]),
    ]
    if all("dependents" in m for _, m in ctas):
        rows += [
            ("  of it computed -> row sums gathered",
             [us(m["row_sums"] - m["computed"]) for _, m in ctas]),
            ("  of it row sums -> dependents triggered",
             [us(m["dependents"] - m["row_sums"]) for _, m in ctas]),
            ("  of it triggered -> written", [us(m["written"] - m["dependents"]) for _, m in ctas]),
        ]
    rows += [
        ("written (from the first start)", [us(m["written"] - t0) for _, m in ctas]),
        ("last copies issued (from the first start)", [us(m["issued_last"] - t0) for _, m in ctas]),
    ]
    for name, values in rows:
        print(f"  {name:<44} {spread(values)}")
    per_sm = collections.Counter(sm for sm, _ in ctas)
    for count in sorted(set(per_sm.values())):
        ends = [us(m["written"] - t0) for sm, m in ctas if per_sm[sm] == count]
        print(f"  CTAs on SMs holding {count}: written {spread(ends)}")
    # When each SM's last CTA wrote its output: the launch's end is the latest. A static division
    # of the tiles (the balanced schedule) leaves a slow SM's share on it; the hardware's block
    # scheduler moves later CTAs to the SMs that free up first (per-row splits over several waves).
    last_by_sm = {}
    for sm, m in ctas:
        last_by_sm[sm] = max(last_by_sm.get(sm, 0), m["written"])
    print(f"  {'each SM, its last CTA written':<44} "
          f"{spread([us(end - t0) for end in last_by_sm.values()])}")
    print_placement(ctas, per_sm)
    print_crossings(ctas)
    print_mid_tile(ctas)
    split_end = max(m["written"] for _, m in ctas)
    if combine:
        print(f"  combine: {len(combine)} CTAs; start {spread([us(m['entry'] - t0) for _, m in combine])}")
        print(f"    past the wait {spread([us(m['waited'] - t0) for _, m in combine])}")
        print(f"    end {spread([us(m['end'] - t0) for _, m in combine])}")
        end = max(m["end"] for _, m in combine)
    else:
        end = split_end
    print(f"  split end {us(split_end - t0):.2f} us; launch end {us(end - t0):.2f} us", end="")
    if next_start is not None:
        print(f"; next launch's first split start {us(next_start - t0):.2f} us "
              f"(gap {us(next_start - end):.2f})")
    else:
        print()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    split, combine = parse(sys.argv[1:])
    launches = sorted(split)
    for i, launch in enumerate(launches):
        following = launches[i + 1] if i + 1 < len(launches) else None
        next_start = (min(m["entry"] for _, m in split[following])
                      if following == launch + 1 else None)
        summarize(launch, split[launch], combine.get(launch, []), next_start)


if __name__ == "__main__":
    main()
