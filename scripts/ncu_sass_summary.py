#!/usr/bin/env python3
"""Summarize Nsight Compute's source page (ncu -i REP --page source --csv --print-source sass):
instructions executed and warp-stall samples per opcode, and the hottest SASS lines; with FROM,
the stall samples of the lines from the first whose source holds FROM (e.g. PREEXIT, the split
kernel's trigger before its output) to the next EXIT: what that stretch of code waits on.
Usage: ncu_sass_summary.py SASS.csv [TOP [FROM]]"""
import csv
import collections
import re
import sys


def find_header(rows):
    for i, row in enumerate(rows):
        if any(cell.strip() == "Source" for cell in row):
            return i
    raise SystemExit("no 'Source' column: not a source-page CSV")


def column(header, *names, exclude=()):
    for name in names:
        for i, cell in enumerate(header):
            if name in cell and not any(x in cell for x in exclude):
                return i
    return None


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def opcode(source):
    text = re.sub(r"^@!?U?P\w+\s+", "", source.strip())
    return text.split(" ")[0].split(".")[0] if text else "?"


def main():
    rows = list(csv.reader(open(sys.argv[1], newline="")))
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 45
    h = find_header(rows)
    header = rows[h]
    src = header.index("Source") if "Source" in header else column(header, "Source")
    executed = column(header, "Instructions Executed", exclude=("Thread", "Predicated"))
    samples = column(header, "Warp Stall Sampling (All", "Sampling (All")
    stall_cols = [i for i, c in enumerate(header) if c.startswith("stall_") or "Stall Reason" in c]
    print("columns:", [header[i] for i in (src, executed, samples) if i is not None])
    lines = []
    for row in rows[h + 1:]:
        if len(row) <= max(i for i in (src, executed, samples) if i is not None):
            continue
        lines.append((row[src], number(row[executed]) if executed is not None else 0.0,
                      number(row[samples]) if samples is not None else 0.0, row))
    total_exec = sum(l[1] for l in lines) or 1.0
    total_samples = sum(l[2] for l in lines) or 1.0
    print(f"{len(lines)} SASS lines; warp instructions executed {total_exec:.0f}; "
          f"stall samples {total_samples:.0f}")
    per_op = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for source, ex, sa, _ in lines:
        entry = per_op[opcode(source)]
        entry[0] += ex
        entry[1] += sa
        entry[2] += 1
    print(f"\n{'opcode':<14}{'lines':>6}{'executed':>12}{'%exec':>7}{'%samples':>9}")
    for op, (ex, sa, n) in sorted(per_op.items(), key=lambda kv: -kv[1][0])[:30]:
        print(f"{op:<14}{n:>6}{ex:>12.0f}{100 * ex / total_exec:>7.1f}{100 * sa / total_samples:>9.1f}")
    print(f"\nhottest {top} lines by stall samples (index, %samples, executed, source"
          + (", top stall columns" if stall_cols else "") + ")")
    indexed = list(enumerate(lines))
    for i, (source, ex, sa, row) in sorted(indexed, key=lambda kv: -kv[1][2])[:top]:
        extra = ""
        if stall_cols:
            reasons = sorted(((number(row[c]), header[c]) for c in stall_cols), reverse=True)[:2]
            extra = " | " + ", ".join(f"{name}={v:.0f}" for v, name in reasons if v > 0)
        print(f"{i:>5} {100 * sa / total_samples:>5.1f}% {ex:>9.0f}  {source.strip()[:70]}{extra}")
    if len(sys.argv) > 3:
        window(lines, header, stall_cols, sys.argv[3], total_samples)


def window(lines, header, stall_cols, start_text, total_samples):
    first = next((i for i, l in enumerate(lines) if start_text in l[0]), None)
    if first is None:
        raise SystemExit(f"no SASS line holds '{start_text}'")
    exit_line = re.compile(r"(^|[\s;])EXIT\b")
    last = next((i for i in range(first + 1, len(lines)) if exit_line.search(lines[i][0])),
                len(lines) - 1)
    part = lines[first:last + 1]
    samples = sum(l[2] for l in part)
    print(f"\nlines {first}-{last} ('{start_text}' to the next EXIT): {samples:.0f} stall samples "
          f"({100 * samples / total_samples:.1f} %); per stall reason:")
    per_reason = {header[c]: sum(number(l[3][c]) for l in part) for c in stall_cols}
    for name, value in sorted(per_reason.items(), key=lambda kv: -kv[1])[:8]:
        if "Not Issued" not in name and value > 0:
            print(f"  {name:<40}{value:>8.0f}")


if __name__ == "__main__":
    main()
