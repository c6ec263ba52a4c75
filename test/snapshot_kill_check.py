#!/usr/bin/python3
"""Stops test/snapshot_kill with SIGKILL at a fixed schedule of places (after an update before its
snapshot, inside a snapshot's write, after a snapshot), starting the program again with autoload after
each kill; passes when every kill ended the process, every start resumes from the last snapshot that was
complete when the process died, with exactly the parameters an unbroken run had at that iteration, each
start after a kill inside a write removes that write's temporary file (saying so), and the last run ends
with the unbroken run's parameters and no temporary file. Then the newest snapshot is truncated: the
next start warns, names it, resumes from the one before and still ends where the unbroken run does.
The kills are placed by the program itself (its Killer extension), so every run sees the same ones.
Usage: snapshot_kill_check.py PROGRAM"""
import os
import re
import signal
import subprocess
import sys
import tempfile

program = sys.argv[1]
iterations = 24
# (iteration, place): the first write of all, kills in every place, two in a row at one iteration's
# neighbours, and one at the last iteration's write.
schedule = [(1, "write"), (3, "update"), (4, "write"), (7, "snapshot"), (8, "write"), (12, "update"),
            (13, "snapshot"), (17, "write"), (18, "write"), (iterations, "write")]
tmp = tempfile.mkdtemp()


def sums(text, what):
    return {int(m[0]): m[1] for m in re.findall(rf"^{what} (\d+) (\S+)$", text, re.M)}


def run(*args):
    return subprocess.run([program, *map(str, args)], capture_output=True, text=True, timeout=300)


reference_run = run(os.path.join(tmp, "reference"), iterations)
assert reference_run.returncode == 0, reference_run.stderr
reference = sums(reference_run.stdout, "iteration")
assert len(reference) == iterations, reference_run.stdout

out = os.path.join(tmp, "killed")
complete = 0  # the newest snapshot written in full
removals_due = 0
for kill_iteration, place in schedule:
    killed = run(out, iterations, kill_iteration, place)
    where = f"the kill at iteration {kill_iteration} ({place})"
    assert killed.returncode == -signal.SIGKILL, f"{where}: exit status {killed.returncode}\n{killed.stderr}"
    resumed = sums(killed.stdout, "resumed")
    assert list(resumed) == [complete], f"{where}: resumed from {list(resumed)}, expected {complete}"
    if complete:
        assert resumed[complete] == reference[complete], f"{where}: resumed with another sum than the unbroken run"
    removed = len(re.findall(r"kusari: snapshot: removed \d+ unfinished snapshot writes? from", killed.stderr))
    assert removed == removals_due, f"{where}: {removed} removals, expected {removals_due}\n{killed.stderr}"
    done = sums(killed.stdout, "iteration")
    assert all(reference[i] == value for i, value in done.items()), f"{where}: a step differs from the unbroken run"
    complete = kill_iteration if place == "snapshot" else kill_iteration - 1
    removals_due = 1 if place == "write" else 0
    leftovers = [name for name in os.listdir(out) if ".tmp-" in name]
    assert len(leftovers) == removals_due, f"{where}: temporary files {leftovers}"

last = run(out, iterations)
assert last.returncode == 0, last.stderr
assert sums(last.stdout, "resumed") == {complete: reference[complete]}, last.stdout
assert "kusari: snapshot: removed 1 unfinished snapshot write from" in last.stderr, last.stderr
assert sums(last.stdout, "iteration").get(iterations) == reference[iterations], last.stdout
leftovers = [name for name in os.listdir(out) if ".tmp-" in name]
assert not leftovers, f"temporary files left behind: {leftovers}"
print(f"{len(schedule)} kills at {schedule}: every start resumed from the last complete snapshot with the unbroken "
      "run's parameters, removed the unfinished write, and the run ended where the unbroken one does")

newest = os.path.join(out, f"snapshot_iter_{iterations}")
with open(newest, "r+b") as f:
    f.truncate(os.path.getsize(newest) // 2)
again = run(out, iterations)
assert again.returncode == 0, again.stderr
assert f"resumed from '{os.path.join(out, f'snapshot_iter_{iterations - 1}')}'" in again.stderr, again.stderr
assert newest in again.stderr and "truncated" in again.stderr, again.stderr
assert sums(again.stdout, "resumed") == {iterations - 1: reference[iterations - 1]}, again.stdout
assert sums(again.stdout, "iteration").get(iterations) == reference[iterations], again.stdout
print("a truncated newest snapshot is named and skipped; the run resumes from the one before")
