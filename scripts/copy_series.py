"""Device-to-device copy bandwidth copy by copy, in order, over a sustained run (torch, CUDA events).

The tuner's copy reference (core/measure.cpp: copy_bandwidth_gbs) times 20 copies of 1 GiB, ~11 ms
of load after an idle GPU. The sparse MLA timings at batch 512 run ~7 ms a replay and slow down
~13 % after 30-60 ms of load (BENCHMARKS.md section 7, twenty-first session). This prints whether
the copy itself slows the same way: GB/s (read + write, as the tuner counts it) per copy for
`--ms` milliseconds of back-to-back copies, summarized per window of `--window` copies, after
`--rest` seconds of idle GPU.

Usage: python3 scripts/copy_series.py [--gib 1] [--ms 600] [--window 10] [--rest 2]
"""
import argparse
import time

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--ms", type=float, default=600.0)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--rest", type=float, default=2.0)
    args = parser.parse_args()
    count = int(args.gib * (1 << 30)) // 4
    source = torch.ones(count, dtype=torch.float32, device="cuda")
    destination = torch.empty_like(source)
    destination.copy_(source)
    torch.cuda.synchronize()
    time.sleep(args.rest)
    events = [torch.cuda.Event(enable_timing=True)]
    events[0].record()
    began = time.perf_counter()
    while (time.perf_counter() - began) * 1000.0 < args.ms:
        for _ in range(8):  # a few copies queued per check of the host clock
            destination.copy_(source)
            events.append(torch.cuda.Event(enable_timing=True))
            events[-1].record()
        if len(events) > 16:
            events[-9].synchronize()  # the batch before: the GPU's queue never runs dry
    torch.cuda.synchronize()
    bytes_moved = 2.0 * count * 4
    rates = [bytes_moved / (a.elapsed_time(b) * 1e-3) / 1e9 for a, b in zip(events, events[1:])]
    print(f"{len(rates)} copies of {args.gib:g} GiB after {args.rest:g} s idle; GB/s (read + write) "
          f"per window of {args.window}: start_ms median min max")
    for first in range(0, len(rates), args.window):
        window = sorted(rates[first:first + args.window])
        start_ms = sum(bytes_moved / r / 1e6 for r in rates[:first])
        print(f"{start_ms:8.1f} {window[len(window) // 2]:7.0f} {window[0]:7.0f} {window[-1]:7.0f}")


if __name__ == "__main__":
    main()
