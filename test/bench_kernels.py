#!/usr/bin/python3
"""bench/kernels on small batches: every operation's line in the bench format with its bytes, rate and
copy fraction (the copy itself 1), the same operations in the same order as its PyTorch twin's WORKLOADS
(plus kusari's two channel passes; the widening only for half types); the twin's own Python run against
a stand-in for PyTorch (test/torch_stand_in: names, order and line format, no computation), its lines
those of kusari's operations but the channel passes, with the same bytes (twice for the finiteness
check, which PyTorch's kernel also writes); and kernel_pairs.py's table of the two sides, its ratios
checked on twin lines made from kusari's.
Usage: bench_kernels.py KERNELS TWIN PAIRS [DEVICE ...]"""
import ast
import os
import re
import subprocess
import sys

kernels, twin, pairs_script = sys.argv[1:4]
devices = sys.argv[4:] or ["cpu"]

tree = ast.parse(open(twin).read())
twin_workloads = next(ast.literal_eval(node.value) for node in tree.body
                      if isinstance(node, ast.Assign) and node.targets[0].id == "WORKLOADS")
LINE = re.compile(r"^kernels_b1_(\w+?)_(float16|float32)_(cpu|cuda|loopback)(_channels_last)?: ([0-9.]+) ms/step, "
                  r"[0-9.]+ samples/s bytes_mb=([0-9.]+) gb_s=([0-9.]+) copy_fraction=([0-9.]+)$")

for device in devices:
    for dtype, channels_last in (("float16", "1"), ("float32", "0")):
        command = [kernels, "--device", device, "--dtype", dtype, "--channels-last", channels_last, "--batch", "1",
                   "--warmup", "0", "--steps", "1", "--seconds", "0", "--threads", "2"]
        ran = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert ran.returncode == 0, f"{command}: exit {ran.returncode}\n{ran.stdout}{ran.stderr}"
        lines = ran.stdout.splitlines()
        matches = [LINE.match(line) for line in lines]
        assert all(matches), f"{command}: a line out of format:\n{ran.stdout}"
        names = [m.group(1) for m in matches]
        expected = list(twin_workloads)
        expected[6:6] = ["channel_sums", "channel_affine_relu"]
        if dtype == "float32":
            expected.remove("copy_tensors_resnet50_grads")
        assert names == expected, f"{command}: expected the operations {expected}, got {names}"
        for m in matches:
            assert m.group(2) == dtype and (m.group(4) is not None) == (channels_last == "1"), m.group(0)
            ms, mb, gb_s, fraction = (float(m.group(i)) for i in (5, 6, 7, 8))
            assert ms > 0 and mb > 0 and gb_s >= 0 and fraction >= 0, m.group(0)  # the emulation's are tiny
            assert abs(gb_s - mb * 2**20 / (ms * 1e6)) <= 0.05 * gb_s + 0.1, f"not bytes over time: {m.group(0)}"
        assert matches[0].group(8) == "1.000", f"the copy is the reference: {lines[0]}"

        # The twin itself, against the stand-in.
        here = os.path.dirname(os.path.abspath(__file__))
        stand_in = dict(os.environ, PYTHONPATH=os.path.join(here, "torch_stand_in"))
        twin_run = subprocess.run([sys.executable, twin, "--dtype", dtype, "--channels-last", channels_last, "--batch",
                                   "1", "--warmup", "0", "--steps", "1", "--seconds", "0"], capture_output=True,
                                  text=True, timeout=120, env=stand_in)
        assert twin_run.returncode == 0, f"the twin: exit {twin_run.returncode}\n{twin_run.stdout}{twin_run.stderr}"
        kusari_bytes = {m.group(1): float(m.group(6)) for m in matches}
        twin_line = re.compile(r"^torch_(kernels_b1_(\w+?)_(float16|float32)_cuda(_channels_last)?): [0-9.]+ ms/step, "
                               r"[0-9.]+ samples/s bytes_mb=([0-9.]+) gb_s=[0-9.]+ copy_fraction=[0-9.]+$")
        twin_matches = [twin_line.match(line) for line in twin_run.stdout.splitlines()]
        assert all(twin_matches), f"the twin: a line out of format:\n{twin_run.stdout}"
        assert [m.group(2) for m in twin_matches] == [n for n in names if not n.startswith("channel_")], twin_run.stdout
        for m in twin_matches:
            assert m.group(3) == dtype and (m.group(4) is not None) == (channels_last == "1"), m.group(0)
            if "resnet50" in m.group(2):
                continue  # the stand-in's ResNet-50 has four parameters
            times = 2 if m.group(2).startswith("all_finite") else 1
            assert abs(float(m.group(5)) - times * kusari_bytes[m.group(2)]) <= 0.1, (m.group(0), kusari_bytes)

        # The twin's lines, as if PyTorch took twice as long for every operation but the channel passes.
        twin_lines = [re.sub(r"^kernels_(\S+): ([0-9.]+) ms/step",
                             lambda m: f"torch_kernels_{m.group(1)}: {2 * float(m.group(2)):.4f} ms/step", line)
                      for line in lines if "channel_" not in line]
        table = subprocess.run([sys.executable, pairs_script], input="\n".join(lines + twin_lines), text=True,
                               capture_output=True, check=True).stdout.splitlines()
        assert len(table) == 2 + len(names), table
        rows = {row.split(" | ")[0][2:]: row.split(" | ") for row in table[2:]}
        for m in matches:
            row = rows[m.group(0).split(":")[0][len("kernels_"):]]
            if m.group(1).startswith("channel_"):
                assert row[2] == "–" and row[3] == "–", row
            else:
                assert abs(float(row[3]) - 0.5) <= 0.01, row
print("bench_kernels: passed on", ", ".join(devices))
