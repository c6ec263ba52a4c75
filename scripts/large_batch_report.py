#!/usr/bin/python3
"""Tabulates the finished runs of the large-batch study (docs/large_batch/<run>/log and args.json) as a
Markdown table, and draws the validation accuracy of every run by epoch into
docs/large_batch/accuracy.svg with kusari's own plot code (build/tools/plot_logs).
Each row names the commit and CPU it ran at (docs/large_batch/<run>/provenance.json); a row whose commit
precedes a change of its recipe's numerics (docs/large_batch/numerics_changes.json: commits after which
the recipe computes other values) says so in its last column: its figures are not today's code's.
Usage: scripts/large_batch_report.py [BUILD_DIR]   (prints the table)"""
import json
import os
import subprocess
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "large_batch")
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build")

RECIPES = ("goyal2017", "akiba2017", "jia2018", "kumar2017")
changes = json.load(open(os.path.join(root, "numerics_changes.json")))


def recipe_of(run):
    """The recipe a run's name starts with (baseline and plain runs are fashion_mnist's)."""
    return next((r for r in RECIPES if run.startswith(r)), "fashion_mnist")


def contains(commit, change):
    """Whether `commit` has `change` in its history (git merge-base --is-ancestor)."""
    return subprocess.run(["git", "merge-base", "--is-ancestor", change, commit.removesuffix("-modified")],
                          cwd=root, capture_output=True).returncode == 0


def numerics(run, commit):
    missing = [c["commit"] for c in changes if recipe_of(run) in c["recipes"] and not contains(commit, c["commit"])]
    return "current" if not missing else "before " + ", ".join(missing)


rows, logs = [], []
for run in sorted(os.listdir(root)):
    log_path = os.path.join(root, run, "log")
    if not os.path.isfile(log_path):
        continue
    log = json.load(open(log_path))
    args = json.load(open(os.path.join(root, run, "args.json")))
    provenance = json.load(open(os.path.join(root, run, "provenance.json")))
    evaluated = [e for e in log if "validation/main/accuracy" in e]
    last = log[-1]
    epochs = last["epoch"]
    rows.append([run, args["batchsize"], epochs,
                 f"{100 * evaluated[-1]['validation/main/accuracy']:.2f}%",
                 f"{100 * max(e['validation/main/accuracy'] for e in evaluated):.2f}%",
                 f"{last['main/loss']:.4f}", f"{last['elapsed_time'] / 60:.1f} min",
                 f"{last['elapsed_time'] / epochs:.0f} s", args["seed"], provenance["commit"][:7],
                 provenance["cpu"], numerics(run, provenance["commit"])])
    logs.append(log_path)

print("| run | B | epochs | final val top-1 | best val top-1 | final train loss | wall time | epoch time | seed | commit "
      "| CPU | numerics |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for row in rows:
    print("| " + " | ".join(str(x) for x in row) + " |")
if logs:
    subprocess.run([os.path.join(build, "tools", "plot_logs"), os.path.join(root, "accuracy.svg"),
                    "validation/main/accuracy"] + logs, check=True)
