#!/usr/bin/env python3
"""The card's SM clock, power and throttle reasons (nvidia-smi samples) in each phase of a device
call: the phases file holds "EPOCH_SECONDS name begins|ends" lines; the sweep's stamped log
("EPOCH_SECONDS line") splits the sweep into its screens and its finalists' re-timing (from its
last progress line on). Without a sweep log, each phase's begin-end is summarized alone.
Usage: clock_phases.py CLOCKS.csv PHASES.txt [SWEEP_STAMPED.log]"""
import statistics
import sys
import time


def samples(path):
    out = []
    for line in open(path):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 5:
            continue
        try:
            stamp = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S"))
            stamp += float("0." + parts[0].split(".")[1]) if "." in parts[0] else 0.0
            out.append((stamp, float(parts[1]), float(parts[3]), int(parts[4], 16)))
        except ValueError:
            continue
    return out


def summary(name, rows):
    if not rows:
        print(f"{name}: no samples")
        return
    clocks = sorted(r[1] for r in rows)
    power = [r[2] for r in rows]
    reasons = {}
    for r in rows:
        reasons[r[3]] = reasons.get(r[3], 0) + 1
    low = sum(1 for c in clocks if c < 1900)
    busy = sorted(r[1] for r in rows if r[2] > 250)  # a kernel running (idle draws ~80-120 W)
    busy_text = f"busy (> 250 W) {len(busy)}: SM MHz median {statistics.median(busy):.0f}, " \
        f"min {busy[0]:.0f}; " if busy else "busy (> 250 W) 0; "
    print(f"{name}: {len(rows)} samples; {busy_text}all: SM MHz median {statistics.median(clocks):.0f}, "
          f"min {clocks[0]:.0f}, < 1900 in {low}; power W median {statistics.median(power):.0f}, "
          f"max {max(power):.0f}; throttle reasons " +
          ", ".join(f"{k:#x}: {v}" for k, v in sorted(reasons.items())))


def main():
    rows = samples(sys.argv[1])
    phases = {}
    for line in open(sys.argv[2]):
        stamp, name, _ = line.split()
        phases[name] = phases.get(name, []) + [float(stamp)]
    if len(sys.argv) < 4:  # phases NAME begins / NAME ends, each summarized alone
        for name, (begin, end) in phases.items():
            summary(name, [r for r in rows if begin <= r[0] < end])
        return
    bench_begin, sweep_begin = phases["bench"][0], phases["sweep"][0]
    sweep_end = phases["sweep"][1]
    last_progress = sweep_begin
    for line in open(sys.argv[3]):
        stamp, _, text = line.partition(" ")
        if text.startswith("sweep ") and "/" in text.split()[1]:
            last_progress = float(stamp)
    summary("bench (winners alone)", [r for r in rows if bench_begin <= r[0] < sweep_begin])
    summary("sweep: plan and screens", [r for r in rows if sweep_begin <= r[0] < last_progress])
    summary("sweep: finalists + default re-timed", [r for r in rows if last_progress <= r[0] < sweep_end])


main()
