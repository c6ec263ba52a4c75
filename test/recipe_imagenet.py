#!/usr/bin/python3
"""The imagenet preset end to end on a few made-up RGB JPEGs of ImageNet-like sizes: random-resized-crop
and flip to 224 for training, shorter side 256 and centre crop for evaluation, ImageNet's mean and
standard deviation, three channels, list shards per rank, under mpiexec -n 2 (ResNet-20, which takes
any input size, stands in for ResNet-50 to keep it quick).
Usage: recipe_imagenet.py MPIEXEC RECIPE [EXTRA_FLAG ...]"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

from PIL import Image

mpiexec, recipe = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
tmp = tempfile.mkdtemp()
try:
    rng = random.Random(0)
    for split, count in (("train", 16), ("val", 6)):
        lines = []
        for i in range(count):
            width, height = rng.choice([(500, 375), (375, 500), (320, 256)])
            image = Image.new("RGB", (width, height), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
            image.paste((255, 255, 255), (0, 0, width // (1 + i % 4), height // 3))
            path = f"{split}/{i:03d}.JPEG"
            os.makedirs(os.path.join(tmp, split), exist_ok=True)
            image.save(os.path.join(tmp, path), quality=90)
            lines.append(f"{path} {i % 10}")
        with open(os.path.join(tmp, split + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    out = os.path.join(tmp, "out")
    command = [mpiexec, "-n", "2", recipe, "--preset", "imagenet", "--train", os.path.join(tmp, "train.txt"),
               "--val", os.path.join(tmp, "val.txt"), "--root", tmp, "--model", "resnet20", "--classes", "10",
               "--batchsize", "8", "--bn-batch", "2", "--epoch", "1", "--eval-batchsize", "2", "--threads", "1",
               "--out", out] + extra
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(command)}\n{result.stdout}\n{result.stderr}"
    log = json.load(open(os.path.join(out, "log")))
    # 8 images per rank in batches of 4.
    assert len(log) == 1 and log[0]["iteration"] == 2, log
    for key in ("main/loss", "validation/main/accuracy", "validation/main/accuracy_top5"):
        assert key in log[0], f"{key} missing from {log[0]}"
    print(f"{os.path.basename(recipe)}: the imagenet preset ran on JPEG lists")
finally:
    shutil.rmtree(tmp, True)
