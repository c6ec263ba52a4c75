#!/usr/bin/python3
"""Runs test/timeline_train under mpiexec -n 2 with KUSARI_TIMELINE set; passes when each rank's trace
parses as Chrome trace-event JSON, holds the forward, backward, update, data and bucket spans, and
on some step a bucket's all-reduce span overlaps that step's backward span (it started before
backward ended).
Usage: timeline_check.py MPIEXEC PROGRAM"""
import json
import os
import subprocess
import sys
import tempfile

mpiexec, program = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp()
env = dict(os.environ, KUSARI_TIMELINE=os.path.join(tmp, "trace.json"))
subprocess.run([mpiexec, "-n", "2", program], env=env, check=True, timeout=300)
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
