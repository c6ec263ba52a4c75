#!/usr/bin/python3
"""Writes a synthetic ImageNet-format set for the GPU check (scripts/gpu_check.sh): photograph-like
500x375 (and 375x500) RGB JPEGs over 1000 classes, each a smooth colour field of its class with noise
and a few shapes, and train.txt / val.txt of "relative/path label" lines, as the recipes' --train and
--val take them (paths relative to DIR, the recipes' --root); written on every core.
Usage: synthetic_imagenet.py DIR TRAIN_IMAGES VAL_IMAGES"""
import multiprocessing
import os
import sys

import numpy
from PIL import Image, ImageDraw

CLASSES = 1000


def image(rng, label):
    """One picture: a gradient between two colours drawn from the class, noise, and three shapes."""
    width, height = (500, 375) if rng.random() < 0.75 else (375, 500)
    tint = numpy.random.default_rng(label).uniform(0, 255, size=(2, 3))
    ramp = numpy.linspace(0, 1, width)[None, :, None]
    field = tint[0] * (1 - ramp) + tint[1] * ramp
    pixels = numpy.broadcast_to(field, (height, width, 3)) + rng.normal(0, 18, size=(height, width, 3))
    picture = Image.fromarray(numpy.clip(pixels, 0, 255).astype(numpy.uint8), "RGB")
    draw = ImageDraw.Draw(picture)
    for _ in range(3):
        x, y = int(rng.integers(0, width - 60)), int(rng.integers(0, height - 60))
        size = int(rng.integers(20, 120))
        colour = tuple(int(c) for c in rng.integers(0, 256, size=3))
        draw.ellipse((x, y, x + size, y + size), fill=colour)
    return picture


def write_one(task):
    """Writes image `index` of `split` (its own random stream: the set is the same on any core count)."""
    directory, split, index, seed = task
    label = index % CLASSES
    path = f"{split}/{index:06d}.JPEG"
    image(numpy.random.default_rng([seed, index]), label).save(os.path.join(directory, path), quality=88)
    return f"{path} {label}"


def write(directory, split, count, seed):
    os.makedirs(os.path.join(directory, split), exist_ok=True)
    with multiprocessing.Pool() as pool:
        lines = pool.map(write_one, [(directory, split, i, seed) for i in range(count)], chunksize=32)
    temporary = os.path.join(directory, split + ".txt.tmp")
    with open(temporary, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(temporary, os.path.join(directory, split + ".txt"))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    directory, train, val = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    write(directory, "train", train, 0)
    write(directory, "val", val, 1)


main()
