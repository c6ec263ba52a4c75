#!/usr/bin/python3
"""The training benches end on an error with its message and exit status 1, not an abort: --device cuda:0
where this process sees no GPU (where it sees one, the step runs: status 0); a bad --dtype or --device is
a command-line error (status 2).
Usage: bench_errors.py TINY_MLP"""
import subprocess
import sys

from command_check import check

tiny_mlp = sys.argv[1]

check([tiny_mlp, "--dtype", "float8"], 2, ["--dtype", "float8"])
check([tiny_mlp, "--device", "tpu:0"], 2, ["tpu:0"])
command = [tiny_mlp, "--device", "cuda:0", "--warmup", "1", "--steps", "1", "--seconds", "0"]
ran = subprocess.run(command, capture_output=True, text=True, timeout=120)
if ran.returncode != 0:
    output = check(command, 1, ["kusari: uncaught exception: ", "no CUDA device"])
    assert "terminate called" not in output, output
