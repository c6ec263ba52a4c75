#!/usr/bin/python3
"""Jobs across hosts on this machine (scripts/hosts.sh: network namespaces over a bridge, links shaped
with tbf). Skipped (77) without root or network namespaces. Cases:

  recipe LAYOUT RECIPE     the default recipe on LAYOUT (2x1: two hosts of one rank, 2x2: of two) logs
                           what the same ranks log on one host with pretend nodes of the same size, to the
                           last digit; the start-up line counts the hosts as nodes; the gradients cross
                           the link between the hosts; hosts.sh mpiexec refuses a bad --per-host
  suites LAYOUT EXE...     each doctest suite passes on LAYOUT (every algorithm and wire dtype, multi-node
                           batch normalization, the multi-node optimizer, the GPUs' compositions over MPI
                           groups, the NCCL path on loopback arrays: each compares with one process)
  cut RECIPE               host2's link is cut in the middle of training on 2x1 over a slow link: the
                           stall inspector names the rank and host that did not join, the job ends within
                           the stall timeout and the launcher's connection timeout, and --autoload from the
                           last snapshot ends with the unbroken run's log
  kill RECIPE              every process of host2 is killed in the middle of training: the job ends within
                           seconds, and --autoload ends with the unbroken run's log

Usage: hosts_check.py CASE HOSTS_SH MPIEXEC ARGS..."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

case, hosts, mpiexec = sys.argv[1:4]
args = sys.argv[4:]
FLAGS = ["--log-interval", "1", "--threads", "1", "--progress", "off"]
GRADIENT_BYTES = (784 * 1000 + 1000 + 1000 * 1000 + 1000 + 1000 * 10 + 10) * 4  # the MLP's float32 gradients
FAULT_ITERATIONS = 24
SNAPSHOT_EVERY = ["--frequency", str(6 / 300)]  # 6 iterations (300 an epoch at batch 200)
STALL = {"KUSARI_STALL_WARNING": "2", "KUSARI_STALL_TIMEOUT": "6", "KUSARI_HOSTS_ALIVE_SECONDS": "8"}

if os.geteuid() != 0:
    print("skipped: network namespaces need root")
    sys.exit(77)


def layout(text):
    hosts_count, per_host = (int(x) for x in text.split("x"))
    return hosts_count, per_host


def run(command, timeout=300, env=None):
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})})
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def hosts_up(count, rate):
    up = subprocess.run(["bash", hosts, "up", str(count), "--rate", rate], capture_output=True, text=True)
    if up.returncode != 0:
        print(f"skipped: hosts.sh up failed here:\n{up.stderr}")
        sys.exit(77)


def across(per_host, command):
    return ["bash", hosts, "mpiexec", "--per-host", str(per_host)] + command


def log(out):
    with open(os.path.join(out, "log")) as f:
        return [{k: v for k, v in entry.items() if "time" not in k and k != "images_per_second"} for entry in json.load(f)]


def last_iteration(out):
    try:
        with open(os.path.join(out, "log")) as f:
            return json.load(f)[-1]["iteration"]
    except (OSError, ValueError, IndexError, KeyError):
        return 0


def check_recipe(failures, tmp):
    count, per_host = layout(args[0])
    recipe = args[1]
    hosts_up(count, "1gbit")
    flags = FLAGS + ["--max-iterations", "3"]
    one_host, many_hosts = os.path.join(tmp, "one_host"), os.path.join(tmp, "hosts")
    run([mpiexec, "-n", str(count * per_host), recipe] + flags + ["--out", one_host],
        env={"KUSARI_RANKS_PER_NODE": str(per_host)})
    before = int(run(["bash", hosts, "bytes", "host1"]))
    printed = run(across(per_host, [recipe] + flags + ["--out", many_hosts]))
    crossed = int(run(["bash", hosts, "bytes", "host1"])) - before
    if log(many_hosts) != log(one_host):
        failures.append(f"{args[0]} logs {log(many_hosts)}\n  one host logs {log(one_host)}")
    if crossed < 3 * GRADIENT_BYTES:
        failures.append(f"host1's link carried {crossed} bytes, less than 3 iterations' gradients ({3 * GRADIENT_BYTES})")
    expected = f"ranks: {count * per_host} on {count} nodes"
    if expected not in printed:
        failures.append(f"the start-up line says '{expected}': {printed}")
    # A rank count that is not one is refused before anything starts, naming the flag and what came.
    for bad in (["--per-host", "x"], ["--per-host"]):
        refused = subprocess.run(["bash", hosts, "mpiexec"] + bad + [recipe], capture_output=True, text=True)
        if refused.returncode != 2 or "expected --per-host K" not in refused.stderr:
            failures.append(f"hosts.sh mpiexec {' '.join(bad)} exited {refused.returncode}: {refused.stderr}")
    print(f"{args[0]}: the same log as one host with pretend nodes of {per_host}; host1's link carried {crossed} "
          f"bytes ({crossed / GRADIENT_BYTES:.1f} x one iteration's gradients)")


def check_suites(failures, tmp):
    count, per_host = layout(args[0])
    hosts_up(count, "1gbit")
    for exe in args[1:]:
        start = time.monotonic()
        done = subprocess.run(across(per_host, [exe]), capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL)
        summary = re.findall(r"test cases:.*", re.sub(r"\x1b\[[0-9;]*m", "", done.stdout))
        if done.returncode != 0:
            failures.append(f"{os.path.basename(exe)} on {args[0]} exited {done.returncode}:\n"
                            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        print(f"{os.path.basename(exe)} on {args[0]}: {summary[-1] if summary else 'no summary'} "
              f"({time.monotonic() - start:.1f} s)")


def check_fault(failures, tmp, fault):
    recipe = args[0]
    flags = FLAGS + SNAPSHOT_EVERY + ["--max-iterations", str(FAULT_ITERATIONS)]
    unbroken, broken = os.path.join(tmp, "unbroken"), os.path.join(tmp, "broken")
    run([mpiexec, "-n", "2", recipe] + flags + ["--out", unbroken])
    hosts_up(2, "200mbit")
    job = subprocess.Popen(across(1, [recipe] + flags + ["--out", broken]), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, env={**os.environ, **STALL})
    deadline = time.monotonic() + 120
    while last_iteration(broken) < 9 and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    at = last_iteration(broken)
    run(["bash", hosts, fault, "host2"])
    start = time.monotonic()
    try:
        printed, errors = job.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        job.kill()
        printed, errors = job.communicate()
        failures.append(f"{fault} host2: the job had not ended 120 s later")
    took = time.monotonic() - start
    limit = 6 + 10 if fault == "cut" else 10
    if job.returncode == 0:
        failures.append(f"{fault} host2 at iteration {at}: the job exited 0")
    if took > limit:
        failures.append(f"{fault} host2: the job ended {took:.1f} s later, expected within {limit} s")
    if fault == "cut":
        named = re.search(r"kusari stall inspector: .*not joined: rank 1 on host2.*", errors)
        if not named:
            failures.append(f"the stall inspector did not name rank 1 on host2:\n{errors[-3000:]}")
        run(["bash", hosts, "heal", "host2"])
    snapshots = sorted(int(name.split("_")[-1]) for name in os.listdir(broken) if re.fullmatch(r"snapshot_iter_\d+", name))
    run(across(1, [recipe] + flags + ["--out", broken, "--autoload"]))
    if log(broken) != log(unbroken):
        failures.append(f"after {fault} and --autoload: {log(broken)}\n  the unbroken run: {log(unbroken)}")
    print(f"{fault} host2 at iteration {at}: the job ended {took:.1f} s later (exit {job.returncode}); snapshots "
          f"then: {snapshots}; --autoload ran to iteration {last_iteration(broken)} with the unbroken run's log")
    if fault == "cut":
        print("  " + (named.group(0) if named else "(no stall message)"))


failures = []
try:
    with tempfile.TemporaryDirectory() as tmp:
        if case == "recipe":
            check_recipe(failures, tmp)
        elif case == "suites":
            check_suites(failures, tmp)
        elif case in ("cut", "kill"):
            check_fault(failures, tmp, case)
        else:
            sys.exit(f"hosts_check.py: expected recipe, suites, cut or kill, got '{case}'")
finally:
    subprocess.run(["bash", hosts, "down"])

for failure in failures:
    print("FAIL:", failure)
print("PASS" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
