#!/usr/bin/python3
"""Draws KUSARI_TIMELINE traces (one or more ranks' PATH.rank<R>.json) as a PNG: one lane per rank and
thread, a bar per span coloured by its kind (forward, backward, update, data, evaluation, bucket pack,
all-reduce, install), over the window [START, START + LENGTH] in milliseconds of the trace (default:
the last three steps' span).
Usage: render_timeline.py OUT.png TRACE.json... [--window START LENGTH]"""
import json
import sys

from PIL import Image, ImageDraw

COLOURS = {"forward": (66, 133, 244), "backward": (219, 68, 55), "update": (15, 157, 88), "data": (160, 160, 160),
           "evaluation": (171, 71, 188), "pack": (255, 193, 7), "allreduce": (255, 112, 67), "install": (0, 172, 193)}

args = sys.argv[1:]
window = None
if "--window" in args:
    at = args.index("--window")
    window = (float(args[at + 1]) * 1000, float(args[at + 2]) * 1000)
    del args[at:at + 3]
out, traces = args[0], args[1:]
spans = []
for path in traces:
    spans += [e for e in json.load(open(path)) if e.get("ph") == "X"]
lanes = sorted({(e["pid"], e["tid"]) for e in spans})
if window is None:
    updates = sorted(e["ts"] for e in spans if e["name"] == "forward")
    begin = updates[-3] if len(updates) >= 3 else min(e["ts"] for e in spans)
    window = (begin, max(e["ts"] + e["dur"] for e in spans) - begin)
width, lane_height, left = 1400, 36, 150
image = Image.new("RGB", (width, lane_height * len(lanes) + 60), "white")
draw = ImageDraw.Draw(image)
scale = (width - left - 10) / window[1]
for i, (pid, tid) in enumerate(lanes):
    y = 10 + i * lane_height
    draw.text((8, y + 10), f"rank {pid} thread {tid}", fill="black")
    for e in spans:
        if (e["pid"], e["tid"]) != (pid, tid):
            continue
        x0 = left + (e["ts"] - window[0]) * scale
        x1 = left + (e["ts"] + e["dur"] - window[0]) * scale
        if x1 < left or x0 > width - 10:
            continue
        kind = e["name"].split()[-1]
        draw.rectangle([max(x0, left), y, min(max(x1, x0 + 1), width - 10), y + lane_height - 8],
                       fill=COLOURS.get(kind, (120, 120, 120)))
x = left
for kind, colour in COLOURS.items():
    draw.rectangle([x, image.height - 40, x + 14, image.height - 26], fill=colour)
    draw.text((x + 18, image.height - 40), kind, fill="black")
    x += 110
draw.text((left, image.height - 18), f"{window[1] / 1000:.0f} ms shown", fill="black")
image.save(out)
