#!/usr/bin/python3
"""examples/train_fashion_mnist: one epoch logs Chainer's keys (L::Classifier's main/loss and
main/accuracy, the Evaluator's validation/main/..., lr) and learns; a rerun with --epoch 2 resumes from
the snapshot (epoch 1's entry kept as it was, only epoch 2 trained) and leaves one snapshot.
Usage: example_check.py TRAIN_FASHION_MNIST"""
import json
import os
import subprocess
import sys
import tempfile

example = sys.argv[1]
failures = []


def run(out, epochs):
    done = subprocess.run([example, "--epoch", str(epochs), "--out", out, "--unit", "50"], capture_output=True,
                          text=True, timeout=240)
    if done.returncode != 0:
        sys.exit(f"FAIL: {example} --epoch {epochs} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    with open(os.path.join(out, "log")) as f:
        return json.load(f), done.stdout


def expect(condition, what):
    if not condition:
        failures.append(what)


with tempfile.TemporaryDirectory() as out:
    first, printed = run(out, 1)
    expect(len(first) == 1, f"one log entry after one epoch, got {len(first)}")
    entry = first[0]
    for key in ["main/loss", "main/accuracy", "validation/main/loss", "validation/main/accuracy", "lr", "data_time"]:
        expect(key in entry, f"'{key}' in the log entry, got keys {sorted(entry)}")
    expect(entry.get("iteration") == 600, f"600 iterations in epoch 1, got {entry.get('iteration')}")
    expect(entry.get("validation/main/accuracy", 0) > 0.75,
           f"validation accuracy above 0.75 after one epoch, got {entry.get('validation/main/accuracy')}")
    expect("validation/main/accuracy" in printed, "the printed report's header names validation/main/accuracy")
    second, printed = run(out, 2)
    expect(len(second) == 2, f"two log entries after the rerun, got {len(second)}")
    expect(second[0] == entry, f"the rerun keeps epoch 1's entry as it was: {second[0]} against {entry}")
    expect(second[-1].get("iteration") == 1200, f"the rerun ends at iteration 1200, got {second[-1].get('iteration')}")
    snapshots = sorted(name for name in os.listdir(out) if name.startswith("snapshot_iter_"))
    expect(snapshots == ["snapshot_iter_1200"], f"one snapshot kept, the last, got {snapshots}")

for failure in failures:
    print("FAIL:", failure)
print("PASS" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
