#!/usr/bin/env python3
"""Prints the device-memory traffic the host emulation recorded (KUSARI_EMULATED_TRAFFIC=FILE, in a build
with -Dcuda-emulation=true) as a Markdown table, one row per kernel: its launches, the bytes its lanes
loaded and stored, the coalescing of those requests (the fewest 32-byte sectors that hold each request's
distinct bytes over the sectors it moved: 100% where a warp's lanes read or write neighbouring bytes, 12.5%
where each 4-byte lane touches a sector of its own), the distinct sectors of each launch, summed, and how
many times the loads moved them. Then, for each kernel, its instructions under the `--below` coalescing
that move at least 1% of its sectors, by source line (addr2line on the objects named).

    python3 scripts/emulated_traffic.py FILE [--below 0.8] [--require 0.5]

With --require F it ends with status 1, naming them, where a kernel's loads or its stores that move at
least 1% of the run's sectors are coalesced under F.
"""
import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict


def resolve(addresses):
    """{(object, offset): [(function, 'file:line'), ...] innermost frame first} through addr2line."""
    by_object = defaultdict(set)
    for obj, offset in addresses:
        by_object[obj].add(offset)
    frames = {}
    for obj, offsets in by_object.items():
        offsets = sorted(offsets)
        if not obj:
            frames.update({(obj, o): [("?", "?")] for o in offsets})
            continue
        out = subprocess.run(["addr2line", "-C", "-f", "-i", "-a", "-e", obj] + [hex(o) for o in offsets],
                             capture_output=True, text=True, check=True).stdout.splitlines()
        current = None
        lines = iter(out)
        for line in lines:
            if re.fullmatch(r"0x[0-9a-f]+", line):
                current = (obj, int(line, 16))
                frames[current] = []
            else:
                frames[current].append((line, next(lines)))
    return frames


def short_name(function):
    """A kernel's demangled name without its return type, namespaces and parameters."""
    name = re.sub(r"\(anonymous namespace\)::", "", function)
    name = re.sub(r"^void ", "", name)
    depth = 0
    for i, c in enumerate(name):  # cut at the parameter list: the first "(" outside template arguments
        depth += {"<": 1, ">": -1}.get(c, 0)
        if c == "(" and depth == 0:
            name = name[:i]
            break
    name = re.sub(r"\bkusari::(kernels::)?(cuda::)?", "", name)
    return name.replace("__half", "half").replace("__nv_bfloat16", "bfloat16")


def where(frame):
    """'file:line' without the directories."""
    path, _, line = frame[1].rpartition(":")
    return f"{path.rsplit('/', 1)[-1]}:{line.split(' ')[0]}"


def coalescing(tally):
    """The fewest sectors that hold the requests' distinct bytes over the sectors they moved (None where
    nothing was)."""
    return tally["least_sectors"] / tally["sectors"] if tally["sectors"] else None


def percent(fraction):
    return "–" if fraction is None else f"{100 * fraction:.1f}%"


def megabytes(n):
    return f"{n / 1e6:.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report")
    parser.add_argument("--below", type=float, default=0.8, help="list the instructions of kernels under this")
    parser.add_argument("--require", type=float,
                        help="fail where a kernel's loads or stores moving 1%% of the run's sectors are coalesced under this")
    args = parser.parse_args()
    with open(args.report) as f:
        report = json.load(f)
    sector = report["sector_bytes"]
    kernels = report["kernels"]
    addresses = {(k["kernel"]["object"], k["kernel"]["offset"]) for k in kernels}
    addresses |= {(s["site"]["object"], s["site"]["offset"]) for k in kernels for s in k["sites"]}
    frames = resolve(addresses)

    print("| kernel | launches | loaded MB | load coalescing | stored MB | store coalescing | distinct MB | "
          "load sectors ÷ distinct read |")
    print("|---|---|---|---|---|---|---|---|")
    short = []
    failing = []
    run_sectors = sum(k["loads"]["sectors"] + k["stores"]["sectors"] for k in kernels)
    for k in kernels:
        name = short_name(frames[(k["kernel"]["object"], k["kernel"]["offset"])][-1][0])
        short.append(name)
        loads, stores = k["loads"], k["stores"]
        distinct = (loads["distinct_sectors"] + stores["distinct_sectors"]) * sector
        reread = loads["sectors"] / loads["distinct_sectors"] if loads["distinct_sectors"] else None
        print(f"| {name} | {k['launches']} | {megabytes(loads['bytes'])} | {percent(coalescing(loads))} | "
              f"{megabytes(stores['bytes'])} | {percent(coalescing(stores))} | {megabytes(distinct)} | "
              f"{'–' if reread is None else f'{reread:.2f}'} |")
        for kind, tally in (("loads", loads), ("stores", stores)):
            busy = tally["sectors"] > 0 and tally["sectors"] >= 0.01 * run_sectors
            if args.require is not None and busy and coalescing(tally) < args.require:
                failing.append(f"{name}'s {kind} ({percent(coalescing(tally))})")

    for k, name in zip(kernels, short):
        moved = k["loads"]["sectors"] + k["stores"]["sectors"]
        sites = [s for s in k["sites"] if coalescing(s["tally"]) is not None and coalescing(s["tally"]) < args.below
                 and s["tally"]["sectors"] >= 0.01 * moved]
        if not sites:
            continue
        print(f"\n{name}: instructions under {percent(args.below)}")
        for s in sorted(sites, key=lambda s: -s["tally"]["sectors"]):
            chain = frames[(s["site"]["object"], s["site"]["offset"])]
            t = s["tally"]
            print(f"- {s['kind']} at {where(chain[0])} (in {where(chain[-1])}): {percent(coalescing(t))}, "
                  f"{t['bytes'] / t['accesses']:.0f} bytes a lane, {megabytes(t['sectors'] * sector)} MB moved")
    if failing:
        print(f"\ncoalesced under {percent(args.require)}: {', '.join(failing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
