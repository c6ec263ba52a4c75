#!/usr/bin/python3
"""Every recipe's learning rate, logged each iteration (--log-interval 1), against the formulas of
../shared/RECIPES.md evaluated by hand here, on 9 epochs of a tiny set under mpiexec -n 2 (5 iterations
per epoch), so the epoch-valued defaults scale by 9/90 (Goyal's optimizer: its fashion_mnist schedule of
15 epochs by 9/15): Goyal's warm-up from lr_0 over 3 epochs and the ÷10 at 6 and 8; Akiba's slow start
at 4, 7, 8.5; Jia's warm-up over 0.5 epochs then polynomial decay of power 2; fashion_mnist's ÷10 at 2/3.
Usage: recipe_schedules.py MPIEXEC BUILD_RECIPES_DIR"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

from idx_set import write_idx

mpiexec, recipes = sys.argv[1], sys.argv[2]
ITERATIONS_PER_EPOCH = 5


def steps(base, gamma, milestones, e):
    return base * gamma ** sum(1 for m in milestones if e >= m)


def goyal(e, lr=1.0, start=0.1, warmup=3):
    if e < warmup:
        target = steps(lr, 0.1, [6, 8], warmup)
        return start + (target - start) * e / warmup
    return steps(lr, 0.1, [6, 8], e)


def akiba(e, lr=1.0):
    return lr * [0.5, 0.075, 0.01, 0.001][sum(1 for b in [4, 7, 8.5] if e >= b)]


def jia(e, lr=2.0, end=1e-4, warmup=0.5, epochs=9):
    if e < warmup:
        return lr * e / warmup
    return (lr - end) * (1 - min(e - warmup, epochs - warmup) / (epochs - warmup)) ** 2 + end


CASES = {
    # B = 8: lr_base 32 gives lr = 32 * 8 / 256 = 1.
    "goyal2017": (["--lr-base", "32", "--warmup-start-lr", "0.1"], goyal),
    "kumar2017": (["--lr-base", "32", "--warmup-start-lr", "0.1"], goyal),
    "akiba2017": (["--lr-base", "32"], akiba),
    "jia2018": (["--lr", "2"], jia),
    "fashion_mnist": (["--lr-base", "32", "--bn-batch", "0"], lambda e: steps(1.0, 0.1, [6], e)),
}

tmp = tempfile.mkdtemp()
try:
    data = os.path.join(tmp, "idx")
    os.makedirs(data)
    write_idx(data, "train", 40)
    write_idx(data, "t10k", 10)
    for name, (flags, formula) in CASES.items():
        out = os.path.join(tmp, name)
        command = [mpiexec, "-n", "2", os.path.join(recipes, name), "--preset", "fashion_mnist", "--dataset", data,
                   "--batchsize", "8", "--bn-batch", "2", "--epoch", "9", "--log-interval", "1", "--threads", "1",
                   "--no-progress", "--frequency", "100", "--out", out] + flags
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"{' '.join(command)}\n{result.stdout}\n{result.stderr}"
        log = json.load(open(os.path.join(out, "log")))
        assert len(log) == 9 * ITERATIONS_PER_EPOCH, f"{name}: expected 45 entries, got {len(log)}"
        for entry in log:
            epoch = (entry["iteration"] - 1) / ITERATIONS_PER_EPOCH  # the progress before that update
            expected = formula(epoch)
            assert math.isclose(entry["lr"], expected, rel_tol=1e-9, abs_tol=1e-12), \
                f"{name}: iteration {entry['iteration']} (epoch {epoch}): lr {entry['lr']}, expected {expected}"
        print(f"{name}: lr follows the paper's schedule over {len(log)} iterations")
finally:
    shutil.rmtree(tmp, True)
