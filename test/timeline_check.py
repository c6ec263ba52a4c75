#!/usr/bin/python3
"""Runs test/timeline_train under mpiexec -n 2 with KUSARI_TIMELINE set; passes when each rank's trace
parses as Chrome trace-event JSON, holds the forward, backward, update, data and bucket spans, and
a bucket's all-reduce span overlaps a backward span (it started before backward ended), as
distributed::last_overlap, which the program prints, says of every step after the first (the program
forces that schedule with a pause at the end of backward); and when the
trace cannot be written the run still succeeds and says so.
Usage: timeline_check.py MPIEXEC PROGRAM"""
import re
import json
import os
import subprocess
import sys
import tempfile

mpiexec, program = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp()
env = dict(os.environ, KUSARI_TIMELINE=os.path.join(tmp, "trace.json"))
run = subprocess.run([mpiexec, "-n", "2", program], env=env, check=True, timeout=300, capture_output=True, text=True)
reports = [tuple(map(int, m)) for m in re.findall(r"rank \d step (\d) overlap (\d+)/(\d+)", run.stdout)]
assert len(reports) == 8, f"expected 4 overlap reports per rank, got:\n{run.stdout}"
# The first backward precedes the bucket layout, so the first update sends every bucket after it;
# every update all-reduces the same several buckets.
assert all(started == 0 for step, started, _ in reports if step == 0), reports
layouts = {buckets for _, _, buckets in reports}
assert len(layouts) == 1 and min(layouts) >= 2, reports
# The program's pause at the end of backward lets every later step start a bucket inside backward.
assert all(started > 0 for step, started, _ in reports if step > 0), f"a step started no bucket in backward: {reports}"
for rank in (0, 1):
    path = os.path.join(tmp, f"trace.rank{rank}.json")
    events = json.load(open(path))
    spans = [e for e in events if e.get("ph") == "X"]
    names = {e["name"] for e in spans}
    for wanted in ("forward", "backward", "update", "data", "bucket 1 pack", "bucket 1 allreduce", "bucket 1 install"):
        assert wanted in names, f"rank {rank}: no '{wanted}' span in {sorted(names)}"
    assert all(e["pid"] == rank for e in events), f"rank {rank}: events of another pid"
    backward = [e for e in spans if e["name"] == "backward"]
    allreduce = [e for e in spans if e["name"].endswith(" allreduce")]
    overlapping = [a for a in allreduce for b in backward
                   if a["ts"] < b["ts"] + b["dur"] and a["ts"] + a["dur"] > b["ts"]]
    assert overlapping, f"rank {rank}: no bucket all-reduce overlaps a backward span"
    print(f"rank {rank}: {len(spans)} spans, {len(overlapping)} bucket all-reduces overlap backward")

unwritable = dict(os.environ, KUSARI_TIMELINE=os.path.join(tmp, "no such directory", "trace.json"))
run = subprocess.run([mpiexec, "-n", "2", program], env=unwritable, timeout=300, capture_output=True, text=True)
assert run.returncode == 0, f"an unwritable timeline failed the run:\n{run.stderr}"
assert "KUSARI_TIMELINE: cannot write" in run.stderr, f"no word of the unwritable timeline:\n{run.stderr}"
print("an unwritable KUSARI_TIMELINE path is reported and the run completes")
