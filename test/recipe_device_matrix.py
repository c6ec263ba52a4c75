#!/usr/bin/python3
"""The device matrix: every recipe trains on a device as on the CPU, in every compute dtype and model.
For each recipe named, each --dtype (float32, float16, bfloat16) and each model of its fashion_mnist
preset (mlp, resnet20), two epochs of a tiny IDX set (2 iterations each) under mpiexec -n 2, once with
--device cpu and once on DEVICE: the logs agree entry by entry (timings aside) within the dtype's
tolerance, which is 0 for loopback:N (the CPU's kernels behind the device seam, as a GPU's arrays are:
parameters, batches, gradients and their all-reduce, batch statistics, evaluation and snapshots) and
float32 or half precision's reordered sums on a GPU (there only the losses and the learning rate are
compared: a tiny validation set's accuracy moves in steps of 1/16; and the validation loss at a wider
tolerance than the training loss where the model has batch normalization, since after 4 steps the evaluation's running statistics make it
chaotic: ResNet-20's moved 0.23% between 1 and 2 CPU threads, 3.1%, 5.3% and 11.5% in float32, float16 and
bfloat16 on the CUDA host emulation, 7.5% in float32 on an H200 on 2026-12-04, while the float32 CPU's own
first gradients are 1.2% of their largest away from float64's). Then, per recipe and dtype, the
device's first snapshot resumes on the CPU and the CPU's on the device, each to the uninterrupted run's
last entry; and the first recipe once more with 4 KiB gradient buckets, double-buffered (buckets packed
on the device). The imagenet preset's models go through jia2018 (the recipe that offers all three) on
tiny RGB JPEGs at --crop-size 64: ResNet-50, AlexNet-BN and AlexNet-pool5-BN in every dtype, with one
snapshot a run (their 4096-wide layers make a snapshot 200 MB), and with DEVICE loopback:N ResNet-50 in
float32 once more on the CPU with its images made channels-last by the recipe (--memory-order; the CPU's
network is channels-last after its first convolution either way), within float32's tolerance of the
row-major run; every start-up line names the images' memory order (channels-last on a GPU in half
precision for RGB images).
Every run on the device reports the device's peak memory. MPIEXEC "-" runs one
process without mpiexec (the GPU machine has none).
--models and --dtypes (comma-separated) train only those models and dtypes, and leave out the imagenet
preset (and the bucket case unless they keep the MLP in float32), for a slow device (the host emulation of
CUDA): the snapshots then cross devices with the last model's.
Usage: recipe_device_matrix.py [--models LIST] [--dtypes LIST] MPIEXEC DEVICE RECIPE [RECIPE ...]"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

from idx_set import write_set


ALL_DTYPES = ["float32", "float16", "bfloat16"]
ALL_MODELS = ["mlp", "resnet20"]


def options(argv):
    """The --models and --dtypes lists (None where not given) and the remaining arguments; exits naming
    what was expected where the arguments are not so."""
    chosen = {"--models": (None, ALL_MODELS), "--dtypes": (None, ALL_DTYPES)}
    while argv and argv[0].startswith("--"):
        if argv[0] not in chosen or len(argv) < 2:
            sys.exit(f"expected --models or --dtypes followed by a list, got {' '.join(argv[:2])}\n{__doc__}")
        names = argv[1].split(",")
        known = chosen[argv[0]][1]
        if not set(names) <= set(known):
            sys.exit(f"{argv[0]}: expected names among {','.join(known)}, got {argv[1]}")
        chosen[argv[0]] = (names, known)
        argv = argv[2:]
    if len(argv) < 3:
        sys.exit(f"expected MPIEXEC DEVICE RECIPE [RECIPE ...], got {' '.join(argv) or 'nothing'}\n{__doc__}")
    return chosen["--models"][0], chosen["--dtypes"][0], argv


chosen_models, chosen_dtypes, arguments = options(sys.argv[1:])
mpiexec, device, recipes = arguments[0], arguments[1], arguments[2:]
TIMINGS = {"elapsed_time", "time_per_iteration", "data_time", "images_per_second"}
DTYPES = chosen_dtypes or ALL_DTYPES
MODELS = chosen_models or ALL_MODELS
# Relative agreement of logged values between the CPU and DEVICE (0: equal): the training loss and the
# learning rate, and a model with batch normalization's validation loss.
TOLERANCE = {"float32": 5e-3, "float16": 5e-2, "bfloat16": 1e-1}
EVALUATION_TOLERANCE = {"float32": 0.15, "float16": 0.25, "bfloat16": 0.35}


IMAGENET_MODELS = ["resnet50", "alexnet_bn", "alexnet_pool5_bn"]


def run(recipe, data, out, on, *extra):
    """A run of `recipe` on `on`: the fashion_mnist preset over the IDX set `data`, or the flags in
    `extra` (which then name their preset and data); its log without the timings."""
    launcher = [] if mpiexec == "-" else [mpiexec, "-n", "2"]
    preset = [] if "--preset" in extra else ["--preset", "fashion_mnist", "--dataset", data, "--batchsize", "32",
                                               "--eval-batchsize", "16"]
    command = launcher + [recipe] + preset + ["--epoch", "2", "--threads", "1", "--no-progress", "--device", on,
                                              "--out", out] + list(extra)
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    if on != "cpu":
        assert f"{on} peak memory: " in result.stdout, f"{' '.join(command)}: no peak memory line\n{result.stdout}"
    # --memory-order auto: channels-last on a GPU in half precision (the dtype the start-up line names).
    plan = re.search(r"; dtype (\w+), images (\w+)", result.stdout)
    assert plan, f"{' '.join(command)}: no dtype and images in the start-up line\n{result.stdout}"
    auto_channels_last = on.startswith("cuda") and plan.group(1) in ("float16", "bfloat16")
    images = "channels_last" if "channels_last" in extra or auto_channels_last else "row_major"
    assert plan.group(2) == images, f"{' '.join(command)}: expected images {images}\n{result.stdout}"
    with open(os.path.join(out, "log")) as f:
        return [{k: v for k, v in entry.items() if k not in TIMINGS} for entry in json.load(f)]


def differences(cpu, other, dtype, model, tolerance=None):
    """The entries and keys whose values differ beyond the dtype's tolerance on DEVICE, or `tolerance`
    (relative, at least 1 in scale); `model` names the model (the MLP has no running statistics)."""
    tolerance = tolerance_of(dtype) if tolerance is None else tolerance
    if len(cpu) != len(other):
        return [f"{len(cpu)} entries against {len(other)}"]
    found = []
    for index, (a, b) in enumerate(zip(cpu, other)):
        if a.keys() != b.keys():
            found.append(f"entry {index}: keys {sorted(a)} against {sorted(b)}")
            continue
        for key, value in a.items():
            if tolerance != 0 and "loss" not in key and key != "lr":
                continue
            theirs = b[key]
            if tolerance == 0 or not isinstance(value, float):
                same = value == theirs
            else:
                chaotic = key.startswith("validation/") and model != "mlp"
                allowed = EVALUATION_TOLERANCE[dtype] if chaotic else tolerance
                same = math.isfinite(theirs) and abs(value - theirs) <= allowed * max(1.0, abs(value))
            if not same:
                found.append(f"entry {index} {key}: cpu {value}, {device} {theirs}")
    return found


def write_jpegs(directory):
    """Four training and two validation RGB JPEGs of 80x64 pixels, labels below 10, with list files."""
    from PIL import Image
    for split, count in (("train", 4), ("val", 2)):
        os.makedirs(os.path.join(directory, split), exist_ok=True)
        lines = []
        for i in range(count):
            image = Image.new("RGB", (80, 64), (40 * i % 256, 90 + 30 * i % 166, 200 - 25 * i))
            image.paste((255, 255, 255), (0, 0, 10 + 15 * i, 20))
            path = f"{split}/{i}.JPEG"
            image.save(os.path.join(directory, path), quality=90)
            lines.append(f"{path} {i % 10}")
        with open(os.path.join(directory, split + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")


def first_snapshot(directory):
    names = [f for f in os.listdir(directory) if f.startswith("snapshot_iter_")]
    assert names, f"{directory}: no snapshot written"
    return os.path.join(directory, min(names, key=lambda f: int(f.rsplit("_", 1)[1])))


def tolerance_of(dtype):
    return 0 if device.startswith("loopback") else TOLERANCE[dtype]


def both_devices(recipe, data, work, case, tag, dtype, model, flags, failures):
    """Runs `case` on the CPU and on DEVICE (outputs under work/tag_cpu and work/tag_device), adds any
    difference of their logs to `failures`, prints the outcome; returns both logs."""
    on_cpu = run(recipe, data, os.path.join(work, tag + "_cpu"), "cpu", *flags)
    on_device = run(recipe, data, os.path.join(work, tag + "_device"), device, *flags)
    assert all(math.isfinite(e["main/loss"]) for e in on_cpu), f"{case}: loss not finite: {on_cpu}"
    found = differences(on_cpu, on_device, dtype, model)
    failures += [f"{case}: {d}" for d in found]
    print(f"{case}: {'equal' if not found else 'DIFFERENT'} on cpu and {device}"
          f" (main/loss {on_cpu[-1]['main/loss']:.6f})", flush=True)
    return on_cpu, on_device


def main():
    with tempfile.TemporaryDirectory() as work:
        data = write_set(os.path.join(work, "data"), 64, 32)
        failures = []
        for recipe in recipes:
            name = os.path.basename(recipe)
            for dtype in DTYPES:
                for model in MODELS:
                    case = f"{name} {dtype} {model}"
                    flags = ["--dtype", dtype, "--model", model]
                    tag = f"{name}_{dtype}_{model}"
                    on_cpu, on_device = both_devices(recipe, data, work, case, tag, dtype, model, flags, failures)
                    assert len(on_cpu) == 2 and "validation/main/accuracy" in on_cpu[-1], on_cpu
                    if model != MODELS[-1]:
                        continue
                    # Snapshots cross devices both ways.
                    for source, target in (("device", "cpu"), ("cpu", device)):
                        snapshot = first_snapshot(os.path.join(work, f"{tag}_{source}"))
                        resumed = run(recipe, data, os.path.join(work, f"{tag}_{source}_resumed"), target, *flags,
                                      "--resume", snapshot)
                        reference = on_cpu if target == "cpu" else on_device
                        found = differences(reference[-1:], resumed[-1:], dtype, model)
                        failures += [f"{case} resumed on {target} from the {source}'s snapshot: {d}" for d in found]
                        print(f"{case}: the {source}'s {os.path.basename(snapshot)} resumed on {target}: "
                              f"{'equal' if not found else 'DIFFERENT'}", flush=True)
        # The imagenet preset's models, through jia2018.
        jia = [r for r in recipes if os.path.basename(r) == "jia2018" and not chosen_models and not chosen_dtypes]
        if jia:
            images = os.path.join(work, "images")
            write_jpegs(images)
            for model in IMAGENET_MODELS:
                for dtype in DTYPES:
                    case = f"jia2018 imagenet {model} {dtype}"
                    flags = ["--preset", "imagenet", "--train", os.path.join(images, "train.txt"), "--val",
                             os.path.join(images, "val.txt"), "--root", images, "--crop-size", "64", "--classes",
                             "10", "--batchsize", "4", "--eval-batchsize", "1", "--frequency", "2", "--model", model,
                             "--dtype", dtype]
                    on_cpu, _ = both_devices(jia[0], data, work, case, f"imagenet_{model}_{dtype}", dtype, model,
                                             flags, failures)
                    if model == "resnet50" and dtype == "float32" and device.startswith("loopback"):
                        # Its images channels-last on the CPU (where the network is channels-last after the
                        # first convolution either way): the recipe's conversion, within float32's tolerance.
                        reordered = run(jia[0], data, os.path.join(work, "imagenet_resnet50_channels_last"), "cpu",
                                        *flags, "--memory-order", "channels_last")
                        found = differences(on_cpu, reordered, dtype, model, TOLERANCE[dtype])
                        failures += [f"{case} with --memory-order channels_last: {d}" for d in found]
                        print(f"{case}: row-major and channels-last images "
                              f"{'equal' if not found else 'DIFFERENT'}", flush=True)
        # Small buckets packed on the device, double-buffered: still the CPU's numbers (the MLP in float32).
        if "mlp" in MODELS and "float32" in DTYPES:
            both_devices(recipes[0], data, work, f"{os.path.basename(recipes[0])} with 4 KiB buckets, double-buffered",
                         "buckets", "float32", "mlp", ["--bucket-bytes", "4096", "--double-buffering"], failures)
        assert not failures, "\n".join(failures)


main()
