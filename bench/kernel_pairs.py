#!/usr/bin/env python3
"""Pairs the lines of bench/kernels with those of its PyTorch twin (bench/torch_kernels_gpu.py) from the
files given (or stdin) and prints one Markdown table row per operation: both times, kusari's over
PyTorch's, and each side's rate as a fraction of its own run's copy of memory. An operation one side lacks
gets "–" on that side.
Usage: kernel_pairs.py [FILE ...]"""
import fileinput
import re

LINE = re.compile(r"^(torch_)?kernels_(\S+): ([0-9.]+) ms/step, .* copy_fraction=([0-9.]+)")


def pairs(lines):
    """{operation: {"kusari" or "torch": (ms, copy fraction)}} in the order the operations first appear."""
    found = {}
    for line in lines:
        match = LINE.match(line.strip())
        if match:
            side = "torch" if match.group(1) else "kusari"
            found.setdefault(match.group(2), {})[side] = (float(match.group(3)), float(match.group(4)))
    return found


def table(found):
    rows = ["| operation | kusari ms | PyTorch ms | kusari ÷ PyTorch | kusari copy fraction | PyTorch copy fraction |",
            "|---|---|---|---|---|---|"]
    for operation, sides in found.items():
        kusari, torch = sides.get("kusari"), sides.get("torch")
        ratio = f"{kusari[0] / torch[0]:.2f}" if kusari and torch else "–"
        cells = [f"{side[0]:.4f}" if side else "–" for side in (kusari, torch)]
        fractions = [f"{side[1]:.3f}" if side else "–" for side in (kusari, torch)]
        rows.append(f"| {operation} | {cells[0]} | {cells[1]} | {ratio} | {fractions[0]} | {fractions[1]} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table(pairs(fileinput.input())))
