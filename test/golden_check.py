#!/usr/bin/python3
"""Guards the recipes' numerics against silent change: runs the first iterations of every recipe's
fashion_mnist preset under `mpiexec -n 2` (seed 0, one thread per rank) on the first 2048 training and
512 test images of the installed Fashion-MNIST, and compares every iteration's log entry (loss,
accuracies, learning rate, and the validation at the end) with the values stored in
test/golden/<recipe>.json.

The tolerance is one that reordering float32 sums (another CPU's kernels, another thread count inside a
kernel) cannot exceed in three iterations: losses and learning rates within a relative 2e-4, accuracies
within one example of the batch. A change of what the code computes (an initialization, a formula, a
rounding rule) moves them further; such a change updates the stored values in its own commit, saying
why: `golden_check.py --update MPIEXEC RECIPE...` rewrites them.

Skipped (exit 77) where Fashion-MNIST is not installed (Debian package dataset-fashion-mnist).
Usage: golden_check.py [--update] MPIEXEC RECIPE..."""
import gzip
import json
import os
import subprocess
import sys
import tempfile

from idx_set import write_files

DATASET = "/usr/share/datasets/fashion-mnist"
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
BATCH, ITERATIONS = 512, 3
FLAGS = ["--preset", "fashion_mnist", "-b", str(BATCH), "--epoch", "2", "--max-iterations", str(ITERATIONS),
         "--log-interval", "1", "--seed", "0", "--threads", "1", "--no-progress", "--eval-batchsize", "256"]
IGNORED = {"elapsed_time", "time_per_iteration", "data_time", "images_per_second"}


def write_subset(directory, prefix, n):
    with gzip.open(os.path.join(DATASET, f"{prefix}-images-idx3-ubyte.gz")) as f:
        images = f.read()[16:16 + n * 28 * 28]
    with gzip.open(os.path.join(DATASET, f"{prefix}-labels-idx1-ubyte.gz")) as f:
        labels = list(f.read()[8:8 + n])
    write_files(directory, prefix, images, labels)


def within(key, got, want):
    if "accuracy" in key:
        return abs(got - want) <= 1.0 / BATCH + 1e-9
    return abs(got - want) <= 2e-4 * abs(want) + 1e-9


def main():
    update = sys.argv[1] == "--update"
    mpiexec, recipes = sys.argv[1 + update], sys.argv[2 + update:]
    if not os.path.isdir(DATASET):
        print(f"skipped: {DATASET} is absent (Debian package dataset-fashion-mnist)")
        return 77
    tmp = tempfile.mkdtemp()
    write_subset(tmp, "train", 2048)
    write_subset(tmp, "t10k", 512)
    failures = []
    for recipe in recipes:
        name = os.path.basename(recipe)
        out = os.path.join(tmp, name)
        command = [mpiexec, "-n", "2", recipe, *FLAGS, "--dataset", tmp, "--out", out]
        run = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            failures.append(f"{name}: {' '.join(command)} exited with {run.returncode}\n{run.stderr}")
            continue
        log = [{k: v for k, v in entry.items() if k not in IGNORED} for entry in json.load(open(os.path.join(out, "log")))]
        path = os.path.join(GOLDEN, f"{name}.json")
        if update:
            os.makedirs(GOLDEN, exist_ok=True)
            with open(path + ".tmp", "w") as f:
                json.dump({"command": " ".join(["mpiexec -n 2", name, *FLAGS]), "log": log}, f, indent=1)
                f.write("\n")
            os.replace(path + ".tmp", path)
            print(f"{name}: stored {len(log)} entries in {path}")
            continue
        want = json.load(open(path))["log"]
        if [e.get("iteration") for e in log] != [e.get("iteration") for e in want]:
            failures.append(f"{name}: logged iterations {[e.get('iteration') for e in log]}, "
                            f"expected {[e.get('iteration') for e in want]}")
            continue
        moved = [f"  iteration {w['iteration']} {key}: {got.get(key)} (stored {w[key]})"
                 for got, w in zip(log, want) for key in w
                 if key not in got or not within(key, got[key], w[key])]
        if set(k for e in log for k in e) != set(k for e in want for k in e):
            moved.append(f"  keys {sorted(set(k for e in log for k in e))}, stored {sorted(set(k for e in want for k in e))}")
        if moved:
            failures.append(f"{name}: the log moved from test/golden/{name}.json:\n" + "\n".join(moved))
        else:
            print(f"{name}: {len(log)} log entries within tolerance of the stored values")
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
