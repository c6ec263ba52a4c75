#!/usr/bin/python3
"""Writes the seed corpora of kusari's fuzz targets: small valid files of every kind each target reads,
made here (NumPy, zlib and PIL write them), nothing downloaded.
Usage: make_seeds.py CORPUS_DIR   (writes CORPUS_DIR/<target>/...)"""
import gzip
import io
import os
import struct
import sys
import zipfile

import numpy as np
from PIL import Image

root = sys.argv[1]


def write(target, name, data):
    os.makedirs(os.path.join(root, target), exist_ok=True)
    with open(os.path.join(root, target, name), "wb") as f:
        f.write(data)


def idx(array, code):
    header = struct.pack(">BBBB", 0, 0, code, array.ndim) + struct.pack(f">{array.ndim}i", *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


rng = np.random.default_rng(0)
images = rng.integers(0, 256, size=(3, 4, 5), dtype=np.uint8)
write("idx", "images_u8", idx(images, 0x08))
write("idx", "labels_u8", idx(np.arange(3, dtype=np.uint8), 0x08))
write("idx", "images_u8.gz", gzip.compress(idx(images, 0x08)))
write("idx", "int32", idx(np.arange(6, dtype=np.int32).reshape(2, 3), 0x0C))
write("idx", "float32", idx(np.linspace(0, 1, 4, dtype=np.float32), 0x0D))
write("idx", "float64", idx(np.linspace(0, 1, 4, dtype=np.float64), 0x0E))

for name, array in {"f32": np.arange(6, dtype=np.float32).reshape(2, 3), "f16": np.ones(3, np.float16),
                    "f64_fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)), "i64": np.arange(4),
                    "bool": np.array([True, False]), "scalar": np.array(2.5), "u8_3d": images}.items():
    buffer = io.BytesIO()
    np.save(buffer, array)
    write("npy", name + ".npy", buffer.getvalue())

# The target loads a Linear(3, 2) (keys W (2, 3) and b (2,)) strictly, then a, child/b, x and n loosely.
arrays = {"W": rng.standard_normal((2, 3)).astype(np.float32), "b": np.zeros(2, np.float32),
          "a": np.arange(3.0), "child/b": np.ones((2, 2), np.float32), "x": np.array(1.5), "n": np.array(7)}
for name, save in {"stored": np.savez, "deflated": np.savez_compressed}.items():
    buffer = io.BytesIO()
    save(buffer, **arrays)
    write("npz", name + ".npz", buffer.getvalue())
buffer = io.BytesIO()
with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
    for key, array in arrays.items():
        entry = io.BytesIO()
        np.save(entry, array)
        with archive.open(key + ".npy", "w", force_zip64=True) as out:
            out.write(entry.getvalue())
write("npz", "zip64.npz", buffer.getvalue())

picture = (rng.integers(0, 256, size=(24, 32, 3))).astype(np.uint8)
for name, mode, options in [("rgb.jpg", "RGB", {"format": "JPEG", "quality": 90}),
                            ("gray.jpg", "L", {"format": "JPEG", "quality": 75}),
                            ("progressive.jpg", "RGB", {"format": "JPEG", "progressive": True}),
                            ("cmyk.jpg", "CMYK", {"format": "JPEG"}),
                            ("rgb.png", "RGB", {"format": "PNG"}), ("gray.png", "L", {"format": "PNG"})]:
    buffer = io.BytesIO()
    Image.fromarray(picture).convert(mode).save(buffer, **options)
    write("image", name, buffer.getvalue())

write("label_list", "train.txt", b"n01440764/a.JPEG 0\nn01443537/b.JPEG 1\n\nspaced name.jpg 2\n")
write("label_list", "crlf.txt", b"a.jpg 0\r\nb.jpg 999\r\n")

# Recipe command lines: the first byte picks the recipe (in the order of recipes/papers.cpp), then one
# argument per line, as the study and the tests run them (the snapshot target writes its own seeds).
recipes = ["fashion_mnist", "goyal2017", "akiba2017", "jia2018", "kumar2017"]
lines = {
    "study": ["--preset", "fashion_mnist", "--epoch", "15", "--threads", "1", "--no-progress", "--autoload",
              "--out", "runs/x", "-b", "4096", "--model", "resnet20", "--bn", "local", "--bn-batch", "32"],
    "imagenet": ["--train", "train.txt", "--val", "val.txt", "--root", "/data", "--in-memory", "decoded",
                 "--cache-decoded", "160", "--communicator", "hybrid", "--hybrid-threshold", "65536"],
    "precision": ["--dtype", "float16", "--loss-scale", "dynamic", "--wire-dtype", "bfloat16",
                  "--lr-milestones", "3,6,8", "--warmup-epochs", "0.5", "--zero-gamma", "--resume", "s"],
    "help": ["--help"],
}
for index, recipe in enumerate(recipes):
    for name, args in lines.items():
        write("recipe_flags", f"{recipe}_{name}", bytes([index]) + "\n".join(args).encode())
