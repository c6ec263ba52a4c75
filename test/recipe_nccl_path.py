#!/usr/bin/python3
"""The recipes' data-parallel training through the communicator's NCCL path, without a GPU: jia2018
(hybrid) and kumar2017 (multi_color) train float16 ResNet-20 for two epochs of a tiny IDX set on
loopback:0 under mpiexec -n 2 with KUSARI_LOOPBACK_NCCL=1 (MPI groups on host copies standing in for
NCCL's: the multi-node optimizer's buckets, the float16 wire's factors made on the device, dynamic loss
scaling), and the losses match the same run on the CPU within half precision's reordered sums; ring
(akiba2017's algorithm on CPUs) on the path's arrays ends the job naming the algorithms that serve them,
which shows the path is taken.
Usage: recipe_nccl_path.py MPIEXEC JIA2018 KUMAR2017"""
import json
import math
import os
import subprocess
import sys
import tempfile

from idx_set import write_set

mpiexec, jia2018, kumar2017 = sys.argv[1:4]
# Relative agreement of the losses (float16's reordered sums, as on a GPU).
TOLERANCE = 5e-2


def train(recipe, data, out, device, *extra):
    """Two epochs of `recipe` on `device` under mpiexec -n 2; the completed process."""
    command = [mpiexec, "-n", "2", recipe, "--preset", "fashion_mnist", "--dataset", data, "--batchsize", "32",
               "--eval-batchsize", "16", "--epoch", "2", "--threads", "1", "--no-progress", "--dtype", "float16",
               "--model", "resnet20", "--device", device, "--out", out] + list(extra)
    env = dict(os.environ, KUSARI_LOOPBACK_NCCL="1")
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)


def losses(process, out):
    assert process.returncode == 0, f"{process.args} failed ({process.returncode}):\n{process.stdout}\n{process.stderr}"
    with open(os.path.join(out, "log")) as f:
        return [(key, entry[key]) for entry in json.load(f) for key in sorted(entry) if "loss" in key]


with tempfile.TemporaryDirectory() as work:
    data = write_set(os.path.join(work, "data"), 64, 32)
    failures = []
    for recipe in (jia2018, kumar2017):
        name = os.path.basename(recipe)
        outs = {device: os.path.join(work, f"{name}_{device.replace(':', '')}") for device in ("cpu", "loopback:0")}
        on = {device: losses(train(recipe, data, out, device), out) for device, out in outs.items()}
        cpu, path = on["cpu"], on["loopback:0"]
        assert len(cpu) == len(path) >= 4, (cpu, path)
        for (key, a), (other, b) in zip(cpu, path):
            if key != other or not math.isfinite(b) or abs(a - b) > TOLERANCE * max(1.0, abs(a)):
                failures.append(f"{name}: {key} {a} on the CPU, {other} {b} through the NCCL path")
        print(f"{name}: {len(cpu)} losses through the NCCL path on loopback:0 against the CPU's"
              f" (last {path[-1][0]} {path[-1][1]:.6f} against {cpu[-1][1]:.6f})", flush=True)
    refused = train(jia2018, data, os.path.join(work, "ring"), "loopback:0", "--communicator", "ring")
    output = refused.stdout + refused.stderr
    if refused.returncode == 0 or "on CUDA arrays" not in output or "multi_color" not in output:
        failures.append(f"--communicator ring through the path: exit {refused.returncode}, expected a refusal:\n{output}")
    else:
        print("--communicator ring through the path: refused, naming the algorithms that serve it")
    assert not failures, "\n".join(failures)
