#!/usr/bin/env python3
"""Checks the pipelined split kernel's SASS for a consumer's stage release (the empty mbarrier's
SYNCS.ARRIVE...A1T0) issued while a shared-memory load of that thread (LDS, LDSM) is still in
flight and no MEMBAR lies between them. Such an arrive lets the producers bulk-copy into the stage
before the load has read it: the race the H200 showed at ctas_per_sm 2 (BENCHMARKS.md section 7,
thirteenth session). Reads nvdisasm -hex output; the control bits of each instruction (Volta and
later: stall [41:45), write scoreboard [46:49), read scoreboard [49:52), wait mask [52:58) of the
upper 64 bits) say which loads are still pending.
Usage: nvdisasm -c -hex K.cubin | sass_stage_release.py   (exit 1 when an arrive is exposed)"""
import re
import sys


def instructions(text):
    lines = text.split('\n')
    for i, line in enumerate(lines):
        m = re.search(r'/\*([0-9a-f]{4,5})\*/\s+(.*?);\s*/\* (0x[0-9a-f]+) \*/', line)
        if not m or i + 1 >= len(lines):
            continue
        upper = re.search(r'/\* (0x[0-9a-f]+) \*/', lines[i + 1])
        if not upper:
            continue
        control = int(upper.group(1), 16) >> 41
        yield m.group(1), m.group(2).strip(), control & 0xf, (control >> 5) & 7, (control >> 11) & 0x3f


def exposed_arrives(text):
    pending = {}  # write scoreboard -> [the load that set it, stall cycles issued since]
    exposed = []
    for address, text_, stall, write_sb, wait_mask in instructions(text):
        for sb in [sb for sb in pending if wait_mask >> sb & 1]:
            del pending[sb]
        opcode = re.sub(r'^@!?U?P\d+\s+', '', text_).split()[0]
        if opcode.startswith('MEMBAR') or opcode.startswith('BAR.') or opcode == 'EXIT':
            pending.clear()
        if 'SYNCS.ARRIVE' in opcode and 'A1T0' in opcode and pending:
            exposed.append((address, {sb: list(v) for sb, v in pending.items()}))
        for entry in pending.values():
            entry[1] += stall
        if (opcode.startswith('LDS') or opcode.startswith('LDSM')) and write_sb != 7:
            pending[write_sb] = [address + ' ' + text_[:48], stall]
    return exposed


def main():
    exposed = exposed_arrives(sys.stdin.read())
    for address, loads in exposed:
        listed = ', '.join(f'{load} (issued {cycles} stall cycles before)' for load, cycles in loads.values())
        print(f'arrive at {address} with loads in flight: {listed}')
    print(f'{len(exposed)} exposed stage release(s)')
    return 1 if exposed else 0


if __name__ == '__main__':
    sys.exit(main())
