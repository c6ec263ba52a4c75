#!/usr/bin/python3
"""The emulated GPU's memory traffic (KUSARI_EMULATED_TRAFFIC, detail/emulated_traffic.h) of bench/kernels'
activation workloads at ResNet-50's shapes (batch 2, float16 channels-last): scripts/emulated_traffic.py's
table names every kernel they launch, with its source, and none that moves 1% of the run's sectors or more
has its loads or stores coalesced under 40% (a map that lost its 16-byte packs, or a pass whose lanes
stride across memory, falls to 12.5% or less). The script's gate itself fails a report that is, and
bench/kernels refuses an --only name it does not have.
Usage: emulated_traffic.py KERNELS REPORT_SCRIPT"""
import json
import os
import re
import subprocess
import sys
import tempfile

kernels, report_script = sys.argv[1:3]
WORKLOADS = ["to_channels_last", "bn_relu_forward", "bn_relu_backward", "bn_add_relu_forward", "bn_add_relu_backward", "channel_sums",
             "channel_affine_relu", "add", "add_relu", "relu_grad", "relu", "max_pool_forward", "max_pool_backward",
             "global_average_pool_forward", "global_average_pool_forward_backward"]
# Kernels these workloads must launch (the tiled copy, the packed maps, the channel passes, pooling 8 channels
# a thread with byte winners, the reduction).
EXPECTED = ["copy_transposed_tiles<float16_t, float16_t>", "map_packs<float16_t, float16_t, elementwise::AddRelu<float>, 8, 2ul>", "channel_block_sums<float16_t, 8>",
            "channel_affine_loads<float16_t, 8>", "max_forward<float16_t, 8, unsigned char, FastDivider>",
            "max_scatter<float16_t, 8, unsigned char, FastDivider>", "reduce_each_by_thread<float16_t, float16_t>"]

with tempfile.TemporaryDirectory() as scratch:
    report = os.path.join(scratch, "traffic.json")
    command = [kernels, "--device", "cuda:0", "--batch", "2", "--warmup", "0", "--steps", "1", "--seconds", "0",
               "--only", ",".join(WORKLOADS)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, KUSARI_EMULATED_TRAFFIC=report))
    assert ran.returncode == 0, f"{command}: exit {ran.returncode}\n{ran.stdout}{ran.stderr}"
    names = [line.split(":")[0] for line in ran.stdout.splitlines()]
    expected_names = [f"kernels_b2_{w}_float16_cuda_channels_last" for w in ["copy_reference"] + WORKLOADS]
    assert names == expected_names, f"--only: expected the lines {expected_names}, got {names}"

    table = subprocess.run([sys.executable, report_script, report, "--require", "0.4"], capture_output=True, text=True)
    print(table.stdout)
    assert table.returncode == 0, f"a kernel coalesced under 40%:\n{table.stdout}{table.stderr}"
    rows = {line.split(" | ")[0].lstrip("| ") for line in table.stdout.splitlines() if line.startswith("| ")}
    missing = [k for k in EXPECTED if k not in rows]
    assert not missing, f"expected the kernels {missing} in the table, got {sorted(rows)}"
    every = subprocess.run([sys.executable, report_script, report, "--below", "1.01"], capture_output=True, text=True,
                           check=True).stdout
    assert re.search(r"^- load at [\w.]+:\d+ \(in pooling\.cu:\d+\)", every, re.M), \
        f"expected max pooling's loads by source line (line tables in the kernels' objects), got:\n{every}"

    # The gate: the kernel that moves the most, as if its 4-byte lanes each touched a sector of their own.
    strided = json.load(open(report))
    busiest = max(strided["kernels"], key=lambda k: k["loads"]["sectors"])
    busiest["loads"]["least_sectors"] = busiest["loads"]["sectors"] // 8
    bad = os.path.join(scratch, "strided.json")
    json.dump(strided, open(bad, "w"))
    gated = subprocess.run([sys.executable, report_script, bad, "--require", "0.4"], capture_output=True, text=True)
    assert gated.returncode == 1 and "coalesced under 40.0%" in gated.stderr, \
        f"expected the gate to fail a kernel at 12.5%, got {gated.returncode}:\n{gated.stderr}"

refused = subprocess.run([kernels, "--only", "no_such_workload"], capture_output=True, text=True)
assert refused.returncode == 2 and "expected names of workloads" in refused.stderr and "no_such_workload" in \
    refused.stderr, f"expected --only to refuse an unknown name, got {refused.returncode}: {refused.stderr}"
print("emulated traffic: ok")
