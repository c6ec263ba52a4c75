#!/usr/bin/python3
"""Tiny Fashion-MNIST-format IDX sets for the recipe tests and the GPU check.
Usage as a program: idx_set.py DIRECTORY [TRAIN_N TEST_N]   (writes train-* and t10k-* there)"""
import os
import struct
import sys


def write_files(directory, prefix, images, labels):
    """Writes <prefix>-images-idx3-ubyte (28x28 bytes per image) and <prefix>-labels-idx1-ubyte."""
    n = len(labels)
    assert len(images) == n * 28 * 28, (len(images), n)
    with open(os.path.join(directory, prefix + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28) + bytes(images))
    with open(os.path.join(directory, prefix + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + bytes(labels))


def write_idx(directory, prefix, n):
    """n images of a fixed byte pattern, labelled 0, 1, ..., 9, 0, ..."""
    write_files(directory, prefix, bytes((i * 37 + j) % 256 for i in range(n) for j in range(28 * 28)),
                [i % 10 for i in range(n)])


def write_set(directory, train, test):
    """A training and a test set of `train` and `test` images in `directory` (made if absent); returns it."""
    os.makedirs(directory, exist_ok=True)
    write_idx(directory, "train", train)
    write_idx(directory, "t10k", test)
    return directory


if __name__ == "__main__":
    write_set(sys.argv[1], *((int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (320, 64)))
