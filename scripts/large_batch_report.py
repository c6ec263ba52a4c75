#!/usr/bin/python3
"""Tabulates the finished runs of the large-batch study (docs/large_batch/<run>/log and args.json) as a
Markdown table, and draws the validation accuracy of every run by epoch into
docs/large_batch/accuracy.svg with kusari's own plot code (build/tools/plot_logs).
Usage: scripts/large_batch_report.py [BUILD_DIR]   (prints the table)"""
import json
import os
import subprocess
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "large_batch")
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build")

rows, logs = [], []
for run in sorted(os.listdir(root)):
    log_path = os.path.join(root, run, "log")
    if not os.path.isfile(log_path):
        continue
    log = json.load(open(log_path))
    args = json.load(open(os.path.join(root, run, "args.json")))
    evaluated = [e for e in log if "validation/main/accuracy" in e]
    last = log[-1]
    epochs = last["epoch"]
    rows.append([run, args["batchsize"], epochs,
                 f"{100 * evaluated[-1]['validation/main/accuracy']:.2f}%",
                 f"{100 * max(e['validation/main/accuracy'] for e in evaluated):.2f}%",
                 f"{last['main/loss']:.4f}", f"{last['elapsed_time'] / 60:.1f} min",
                 f"{last['elapsed_time'] / epochs:.0f} s"])
    logs.append(log_path)

print("| run | B | epochs | final val top-1 | best val top-1 | final train loss | wall time | epoch time |")
print("|---|---|---|---|---|---|---|---|")
for row in rows:
    print("| " + " | ".join(str(x) for x in row) + " |")
if logs:
    subprocess.run([os.path.join(build, "tools", "plot_logs"), os.path.join(root, "accuracy.svg"),
                    "validation/main/accuracy"] + logs, check=True)
