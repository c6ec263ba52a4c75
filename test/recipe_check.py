#!/usr/bin/python3
"""Checks one recipe executable end to end on a tiny synthetic Fashion-MNIST-like set (28x28 images whose
brightest row is the label), as `mpiexec -n 2` runs of its fashion_mnist preset:
  - IDX data, two epochs: exit 0, a JSON log with one entry per epoch holding every key the recipes
    promise, args.json, plots and snapshots;
  - resume: a run stopped after the first epoch's snapshot and resumed from it ends with the same
    log values and the same parameters as the uninterrupted run, while a bit-flipped or truncated
    snapshot given to --resume ends the job naming the file and what is broken;
  - a run of half an epoch still logs once, under mpiexec and in one process without it;
  - the progress display through mpiexec's pipe: --progress bar, lines, and --no-progress (fashion_mnist);
  - ImageNet-format data: the set written as JPEG files and list files by scripts/make_image_list,
    two epochs and again stopped and resumed;
  - extra arguments given after the recipe are added to every run (e.g. --dtype float16).
Usage: recipe_check.py MPIEXEC MAKE_IMAGE_LIST RECIPE [EXTRA_FLAG ...]"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy

from idx_set import write_files

mpiexec, make_image_list, recipe = sys.argv[1:4]
extra = sys.argv[4:]
name = os.path.basename(recipe)

LOG_KEYS = ["epoch", "iteration", "elapsed_time", "lr", "time_per_iteration", "data_time", "images_per_second",
            "main/loss", "main/accuracy",
            "main/accuracy_top5", "validation/main/loss", "validation/main/accuracy",
            "validation/main/accuracy_top5"]


def write_idx(directory, prefix, n):
    labels = [(i * 7) % 10 for i in range(n)]
    images = bytearray()
    for i, label in enumerate(labels):
        for row in range(28):
            value = 250 if row == 2 * label + 3 else (i * 31 + row * 17) % 60
            images += bytes([value]) * 28
    write_files(directory, prefix, images, labels)


def run(args, ranks=2):
    command = ([mpiexec, "-n", str(ranks)] if ranks else []) + [recipe] + args
    result = subprocess.run(command, capture_output=True, text=True, errors="surrogateescape", timeout=600)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)}\nexited with {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def load_log(out, entries, last_iteration):
    log = json.load(open(os.path.join(out, "log")))
    assert len(log) == entries, f"{out}: expected {entries} log entries, got {len(log)}: {log}"
    assert log[-1]["iteration"] == last_iteration, log[-1]
    for entry in log:
        missing = [key for key in LOG_KEYS if key not in entry]
        assert not missing, f"{out}: log entry lacks {missing}: {entry}"
        assert 0 <= entry["validation/main/accuracy"] <= entry["validation/main/accuracy_top5"] <= 1, entry
        assert entry["lr"] >= 0 and entry["time_per_iteration"] > 0, entry
        assert 0 <= entry["data_time"] < entry["time_per_iteration"] and entry["images_per_second"] > 0, entry
    return log


def model_params(snapshot):
    with numpy.load(snapshot) as archive:
        return {key: archive[key] for key in archive.files if key.startswith("updater/model:main/")}


tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)
data = os.path.join(tmp, "idx")
os.makedirs(data)
write_idx(data, "train", 40)
write_idx(data, "t10k", 17)
# 20 examples per rank in batches of 4 (B = 8): 5 iterations per epoch; ghost BN over pairs.
common = ["--preset", "fashion_mnist", "--batchsize", "8", "--bn-batch", "2", "--eval-batchsize", "5",
          "--threads", "1"] + extra
idx = common + ["--dataset", data]

# args.json stays JSON for an out directory with a quote, a tab and a byte that is not UTF-8 (Python
# holds it as the surrogate \udcff, which args.json escapes so), and an epoch count written "2.".
whole = os.path.join(tmp, 'whole "run"\t1\udcff')
printed = run(idx + ["--epoch", "2.", "--out", whole])
assert "validation/main/accuracy" in printed, printed
log = load_log(whole, 2, 10)
assert [entry["epoch"] for entry in log] == [1, 2], log
for file in ["args.json", "loss.svg", "accuracy.svg", "lr.svg", "snapshot_iter_5", "snapshot_iter_10"]:
    assert os.path.exists(os.path.join(whole, file)), f"missing {whole}/{file}"
args = json.load(open(os.path.join(whole, "args.json")))
assert args["batchsize"] == 8 and args["epoch"] == 2 and args["preset"] == "fashion_mnist", args
assert args["out"] == whole, args

# Stopped at the first snapshot, then resumed: the same values as the run that never stopped.
parted = os.path.join(tmp, "parted")
run(idx + ["--epoch", "2", "--max-iterations", "5", "--out", parted])
load_log(parted, 1, 5)
run(idx + ["--epoch", "2", "--out", parted, "--resume", os.path.join(parted, "snapshot_iter_5")])
resumed = load_log(parted, 2, 10)
for key in ["main/loss", "validation/main/loss", "validation/main/accuracy", "lr"]:
    assert resumed[1][key] == log[1][key], f"resumed {key} {resumed[1][key]} != uninterrupted {log[1][key]}"
expected = model_params(os.path.join(whole, "snapshot_iter_10"))
actual = model_params(os.path.join(parted, "snapshot_iter_10"))
assert expected.keys() == actual.keys() and expected, (sorted(expected), sorted(actual))
for key in expected:
    assert numpy.array_equal(expected[key], actual[key]), f"{key} differs after resuming"

# A bit-flipped or truncated snapshot given to --resume ends the job with a message naming the file
# and what is broken (the entry's CRC, or the missing end of the archive), never a crash or a hang.
snapshot = open(os.path.join(parted, "snapshot_iter_5"), "rb").read()
for kind, broken, word in [("flipped", snapshot[:len(snapshot) // 2] + bytes([snapshot[len(snapshot) // 2] ^ 0x20])
                            + snapshot[len(snapshot) // 2 + 1:], "corrupt"),
                           ("truncated", snapshot[:len(snapshot) * 2 // 3], "truncated")]:
    path = os.path.join(tmp, kind + "_snapshot")
    open(path, "wb").write(broken)
    command = [mpiexec, "-n", "2", recipe] + idx + ["--epoch", "2", "--out", os.path.join(tmp, kind), "--resume", path]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 1, f"{kind} snapshot: exit status {result.returncode}\n{output}"
    assert path in output and word in output, f"{kind} snapshot: no message naming it as {word}:\n{output}"

# Half an epoch still ends with a log entry.
half = os.path.join(tmp, "half")
run(idx + ["--epoch", "0.5", "--out", half])
load_log(half, 1, 3)

# The progress display through mpiexec's pipe: a bar redrawn in place when asked for, plain lines, or
# nothing; args.json records the choice (--no-progress as "off"). Code common to every recipe, so checked
# with the default command's alone.
if name == "fashion_mnist":
    for mode, shown in [("bar", "\033[J     total ["), ("lines", "% 1 iterations, epoch 0"), ("off", None)]:
        flags = ["--no-progress"] if mode == "off" else ["--progress", mode]
        out = os.path.join(tmp, "progress_" + mode)
        printed = run(idx + ["--epoch", "0.5", "--progress-interval", "1", "--out", out] + flags)
        assert (shown in printed) if shown else ("iterations/sec" not in printed), f"--progress {mode}:\n{printed!r}"
        assert json.load(open(os.path.join(out, "args.json")))["progress"] == mode

# One process without mpiexec: 40 examples in batches of 8.
single = os.path.join(tmp, "single")
run(idx + ["--epoch", "0.5", "--out", single], ranks=0)
load_log(single, 1, 3)

# ImageNet-format data: JPEG files and list files.
images = os.path.join(tmp, "images")
subprocess.run([make_image_list, "--dataset", data, "--out", images], check=True, capture_output=True)
lists = ["--train", os.path.join(images, "train.txt"), "--val", os.path.join(images, "val.txt"), "--root", images]
listed = os.path.join(tmp, "listed")
run(common + lists + ["--epoch", "2", "--out", listed])
listed_log = load_log(listed, 2, 10)
# Resumed from list data too (for kumar2017 the shards are in memory).
listed_parted = os.path.join(tmp, "listed_parted")
run(common + lists + ["--epoch", "2", "--max-iterations", "5", "--out", listed_parted])
run(common + lists + ["--epoch", "2", "--out", listed_parted,
                      "--resume", os.path.join(listed_parted, "snapshot_iter_5")])
resumed_listed = load_log(listed_parted, 2, 10)[1]
for key in ["main/loss", "validation/main/loss"]:
    assert resumed_listed[key] == listed_log[1][key], f"list data: resumed {key} {resumed_listed[key]} differs"
print(f"{name}: IDX and list runs, resume and half-epoch log passed")
