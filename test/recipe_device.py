#!/usr/bin/python3
"""The recipes train on a device other than the CPU exactly as on the CPU: each recipe named here runs 2
epochs of a tiny set under mpiexec -n 2 with --device cpu and with --device loopback:0 (host memory
behind the device seam, as a GPU's arrays are: parameters, batches, gradients and their all-reduce,
batch statistics, evaluation and snapshots all go through it), and the two logs agree entry by entry
(the timings aside); then the loopback run's snapshot resumes on the CPU to the same final log; and the
first recipe once more with 4 KiB gradient buckets, double-buffered (buckets packed on the device).
Usage: recipe_device.py MPIEXEC RECIPE [RECIPE ...]"""
import json
import os
import subprocess
import sys
import tempfile

from idx_set import write_idx

mpiexec, recipes = sys.argv[1], sys.argv[2:]
TIMINGS = {"elapsed_time", "time_per_iteration"}


def run(recipe, data, out, device, *extra):
    command = [mpiexec, "-n", "2", recipe, "--preset", "fashion_mnist", "--dataset", data, "--batchsize", "32",
               "--epoch", "2", "--threads", "1", "--no-progress", "--device", device, "--out", out] + list(extra)
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{command} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    with open(os.path.join(out, "log")) as f:
        return [{k: v for k, v in entry.items() if k not in TIMINGS} for entry in json.load(f)]


with tempfile.TemporaryDirectory() as work:
    data = os.path.join(work, "data")
    os.makedirs(data)
    write_idx(data, "train", 160)
    write_idx(data, "t10k", 40)
    for recipe in recipes:
        name = os.path.basename(recipe)
        on_cpu = run(recipe, data, os.path.join(work, name + "_cpu"), "cpu")
        on_device = run(recipe, data, os.path.join(work, name + "_loopback"), "loopback:0")
        assert on_cpu == on_device, f"{name}: the logs differ\ncpu:      {on_cpu}\nloopback: {on_device}"
        assert len(on_cpu) == 2 and "validation/main/accuracy" in on_cpu[-1], on_cpu
        snapshots = sorted((f for f in os.listdir(os.path.join(work, name + "_loopback")) if f.startswith("snapshot_iter_")),
                           key=lambda f: int(f.rsplit("_", 1)[1]))
        assert snapshots, f"{name}: the loopback run wrote no snapshot"
        first = os.path.join(work, name + "_loopback", snapshots[0])
        resumed = run(recipe, data, os.path.join(work, name + "_resumed"), "cpu", "--resume", first)
        assert resumed[-1] == on_cpu[-1], f"{name}: resumed on the CPU from {first}: {resumed[-1]} != {on_cpu[-1]}"
        print(f"{name}: {len(on_cpu)} epochs equal on cpu and loopback:0; resumed on the CPU from {snapshots[0]}")
    # Small buckets packed on the device, double-buffered: still the CPU's numbers.
    buckets = ["--bucket-bytes", "4096", "--double-buffering"]
    recipe = recipes[0]
    on_cpu = run(recipe, data, os.path.join(work, "buckets_cpu"), "cpu", *buckets)
    on_device = run(recipe, data, os.path.join(work, "buckets_loopback"), "loopback:0", *buckets)
    assert on_cpu == on_device, f"small buckets: the logs differ\ncpu:      {on_cpu}\nloopback: {on_device}"
    print(f"{os.path.basename(recipe)} with 4 KiB buckets, double-buffered: equal on cpu and loopback:0")
