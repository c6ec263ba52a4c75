#!/usr/bin/python3
"""bench/device_cache on a small recorded step (ResNet-20, batch 64): one line for each way of holding
large blocks, the same live peak in both, the expandable segments holding no more than a segment a
block and never less than the live peak; an unknown --model is a command-line error (status 2).
Usage: device_cache_check.py DEVICE_CACHE"""
import re
import sys

from command_check import check

program = sys.argv[1]
check([program, "--model", "resnet18"], 2, ["--model", "resnet18"])
output = check([program, "--model", "resnet20", "--batch", "64", "--threads", "1"], 0, [])
line = re.compile(r"^resnet20_b64_(segments|expandable): requested_peak_mb=(\d+) held_peak_mb=(\d+) "
                  r"held_over_requested=([\d.]+) device_calls=(\d+)$", re.M)
found = {m.group(1): (int(m.group(2)), int(m.group(3)), float(m.group(4))) for m in line.finditer(output)}
assert set(found) == {"segments", "expandable"}, output
(live, held_segments, _), (live_expandable, held_expandable, ratio) = found["segments"], found["expandable"]
assert live == live_expandable and live > 0, output
assert held_expandable <= held_segments, output
assert ratio >= 1.0, output
print(output.strip())
