#!/usr/bin/python3
"""Two hosts on this machine (scripts/hosts.sh: network namespaces over a bridge, links shaped with tbf):
the default recipe with one rank on each host logs what the same two ranks log on one host, to the
last digit, and its gradients cross the wire between the hosts (host1's link carries at least the bytes
its all-reduces send). Skipped (77) without root or network namespaces.
Usage: hosts_check.py HOSTS_SH MPIEXEC FASHION_MNIST"""
import json
import os
import subprocess
import sys
import tempfile

hosts, mpiexec, recipe = sys.argv[1:4]
FLAGS = ["--max-iterations", "3", "--log-interval", "1", "--threads", "1", "--progress", "off"]
GRADIENT_BYTES = (784 * 1000 + 1000 + 1000 * 1000 + 1000 + 1000 * 10 + 10) * 4  # the MLP's float32 gradients

if os.geteuid() != 0:
    print("skipped: network namespaces need root")
    sys.exit(77)


def run(command, timeout=300):
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def log(out):
    with open(os.path.join(out, "log")) as f:
        return [{k: v for k, v in entry.items() if "time" not in k and k != "images_per_second"} for entry in json.load(f)]


failures = []
up = subprocess.run(["bash", hosts, "up", "2", "--rate", "1gbit"], capture_output=True, text=True)
if up.returncode != 0:
    print(f"skipped: hosts.sh up failed here:\n{up.stderr}")
    sys.exit(77)
try:
    with tempfile.TemporaryDirectory() as tmp:
        one_host, two_hosts = os.path.join(tmp, "one_host"), os.path.join(tmp, "two_hosts")
        run([mpiexec, "-n", "2", recipe] + FLAGS + ["--out", one_host])
        before = int(run(["bash", hosts, "bytes", "host1"]))
        printed = run(["bash", hosts, "mpiexec", "--per-host", "1", recipe] + FLAGS + ["--out", two_hosts])
        crossed = int(run(["bash", hosts, "bytes", "host1"])) - before
        if log(two_hosts) != log(one_host):
            failures.append(f"two hosts log {log(two_hosts)}\n  one host logs {log(one_host)}")
        if crossed < 3 * GRADIENT_BYTES:
            failures.append(f"host1's link carried {crossed} bytes, less than 3 iterations' gradients "
                            f"({3 * GRADIENT_BYTES})")
        if "ranks: 2" not in printed:
            failures.append(f"the run across hosts has 2 ranks: {printed}")
        print(f"two hosts: the same log as one host; host1's link carried {crossed} bytes "
              f"({crossed / GRADIENT_BYTES:.1f} x one iteration's gradients)")
finally:
    subprocess.run(["bash", hosts, "down"])

for failure in failures:
    print("FAIL:", failure)
print("PASS" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
