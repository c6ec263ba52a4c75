#!/usr/bin/python3
"""Every recipe refuses a bad command line before starting anything: exit status 2 and a message naming
the flag, the expected form and what came; --help lists the flags with their defaults and exits 0; a
global batch the ranks cannot share evenly is refused under mpiexec -n 3.
Usage: recipe_flags.py MPIEXEC RECIPE [RECIPE ...]"""
import os
import subprocess
import sys

mpiexec, recipes = sys.argv[1], sys.argv[2:]
BAD = [
    (["--batchsize", "12x"], ["--batchsize", "integer", "12x"]),
    (["--batchsize", "0"], ["--batchsize", "integer >= 1", "'0'"]),
    (["--seed", "-1"], ["--seed", "integer >= 0", "-1"]),
    (["--epoch", "-1"], ["--epoch", "number > 0", "-1"]),
    (["--epoch", "abc"], ["--epoch", "number > 0", "abc"]),
    (["--bogus", "1"], ["--bogus"]),
    (["--dtype", "int8"], ["--dtype", "float16", "int8"]),
    (["--device", "cuda:0"], ["--device", "CUDA", "cuda:0"]),
    (["--train", "only.txt"], ["--train", "--val"]),
    (["--batchsize"], ["--batchsize"]),
]


def check(command, status, words):
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == status, f"{command}: expected exit {status}, got {result.returncode}\n{output}"
    missing = [w for w in words if w not in output]
    assert not missing, f"{command}: the output lacks {missing}:\n{output}"
    return output


for recipe in recipes:
    for args, words in BAD:
        check([recipe, "--preset", "fashion_mnist"] + args, 2, words)
    if os.path.basename(recipe) == "fashion_mnist":
        check([recipe, "--preset", "imagenet"], 2, ["--preset", "fashion_mnist", "imagenet"])
    else:
        check([recipe, "--preset", "imagenet"], 2, ["--train", "--val"])
    text = check([recipe, "--help"], 0, ["--batchsize", "--epoch", "--resume", "--autoload", "--frequency",
                                          "--seed", "--threads", "--device", "--dtype", "--wire-dtype",
                                          "--communicator", "--preset", "--train", "--val", "--root",
                                          "--dataset", "--model", "--bn-batch"])
    assert "=" in text, text  # defaults are shown
    check([mpiexec, "-n", "3", recipe, "--preset", "fashion_mnist", "--batchsize", "8"], 2,
          ["--batchsize", "multiple of the 3 ranks", "8"])
    print(f"{os.path.basename(recipe)}: flag errors refused")
