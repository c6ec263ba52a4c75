#!/usr/bin/python3
"""Kills test/snapshot_kill with SIGKILL at the moment a snapshot's temporary file appears (until a start
has had to remove an unfinished write), then at 20 random moments (some inside a write too, which each
iteration ends with), starting the program again with autoload after each kill; passes when every start resumes
from a snapshot whose parameters are exactly those an unbroken run had at that iteration, no start
fails, the last run ends with the unbroken run's parameters, and the temporary files of the killed
writes are gone (each start removes them, saying so). Then the newest snapshot is truncated: the next
start warns, names it, resumes from the one before and still ends where the unbroken run does.
Usage: snapshot_kill_check.py PROGRAM"""
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

program = sys.argv[1]
iterations = 40
tmp = tempfile.mkdtemp()


def sums(text, what):
    return {int(m[0]): m[1] for m in re.findall(rf"^{what} (\d+) (\S+)$", text, re.M)}


reference_run = subprocess.run([program, os.path.join(tmp, "reference"), str(iterations)], capture_output=True,
                               text=True, timeout=300, check=True)
reference = sums(reference_run.stdout, "iteration")
assert len(reference) == iterations, reference_run.stdout


def seconds_to_run(count):
    start = time.monotonic()
    subprocess.run([program, os.path.join(tmp, f"timing_{count}"), str(count)], capture_output=True, timeout=300,
                   check=True)
    return time.monotonic() - start


# Start-up and one iteration (a step and its snapshot), apart: a build that starts slowly (a sanitized
# one) still has its kills land among the iterations rather than before the first.
one, five = seconds_to_run(1), seconds_to_run(5)
per_iteration = max((five - one) / 4, 1e-3)
start_up = max(one - per_iteration, 0.0)

out = os.path.join(tmp, "killed")


def temporary_files():
    return {name for name in (os.listdir(out) if os.path.isdir(out) else []) if ".tmp-" in name}


def kill_inside_write(process, stale):
    """SIGKILLs the process as soon as a snapshot's temporary file other than the stale ones (a killed
    start's, which this start removes) is in `out`; False if it ended first."""
    while process.poll() is None:
        if temporary_files() - stale:
            process.send_signal(signal.SIGKILL)
            return True
        time.sleep(0.0002)
    return False


rng = random.Random(11)
kills, resumed_from, removals, aimed = 0, [], 0, 0
while True:
    stale = temporary_files()
    process = subprocess.Popen([program, out, str(iterations)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    killed = False
    # Kills aimed inside a write until one has landed there (at most 10: the write may end between
    # seeing its file and the kill), then 20 at random moments.
    if removals == 0 and aimed < 10:
        aimed += 1
        killed = kill_inside_write(process, stale)
    elif kills - aimed < 20:
        try:
            process.wait(timeout=start_up + rng.uniform(0, 3) * per_iteration)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            killed = True
    stdout, stderr = process.communicate(timeout=300)
    removals += len(re.findall(r"kusari: snapshot: removed \d+ unfinished snapshot writes? from", stderr))
    resumed = sums(stdout, "resumed")
    if resumed:
        (iteration, value), = resumed.items()
        if iteration > 0:
            assert reference[iteration] == value, f"resumed at {iteration} with sum {value}, expected {reference[iteration]}"
            resumed_from.append(iteration)
    if killed:
        kills += 1
        continue
    assert process.returncode == 0, f"a start after {kills} kills failed:\n{stderr}"
    final = sums(stdout, "iteration")
    assert final.get(iterations) == reference[iterations], f"ended with {final.get(iterations)}, expected {reference[iterations]}"
    break
print(f"{kills} kills ({aimed} aimed at a write), resumed from iterations {resumed_from}, {removals} starts removed unfinished writes; "
      "every resumption and the end match the unbroken run")
assert len(resumed_from) >= 3, "too few resumptions to show anything"
assert removals >= 1, "no kill landed inside a snapshot's write"
leftovers = [name for name in os.listdir(out) if ".tmp-" in name]
assert not leftovers, f"temporary files left behind: {leftovers}"

newest = os.path.join(out, f"snapshot_iter_{iterations}")
with open(newest, "r+b") as f:
    f.truncate(os.path.getsize(newest) // 2)
again = subprocess.run([program, out, str(iterations)], capture_output=True, text=True, timeout=300)
assert again.returncode == 0, again.stderr
assert f"resumed from '{os.path.join(out, f'snapshot_iter_{iterations - 1}')}'" in again.stderr, again.stderr
assert newest in again.stderr and "truncated" in again.stderr, again.stderr
assert sums(again.stdout, "resumed") == {iterations - 1: reference[iterations - 1]}, again.stdout
assert sums(again.stdout, "iteration").get(iterations) == reference[iterations], again.stdout
print("a truncated newest snapshot is named and skipped; the run resumes from the one before")
