#!/usr/bin/python3
"""The planning programs refuse a bad command line (CLI11's parse, the validators of
recipes/common/flag_validators.h) with exit status 2 and a message naming the flag, the expected form and
what came: bench/predict_seeds (--recommend and its flags) and bench/allreduce_calibrate
(--rounds, --links-per-node, --first-node-only, unknown arguments); an unreadable cluster file or calibration output ends
with status 1 naming it; a good --recommend ranks the candidates; --replay re-predicts a stored launch,
and the stored launches across hosts give the lines within 25% that docs/hosts.md reports (its table and
its 4 Gbit/s and 250 Mbit/s paragraphs), MPICH's 2 x 2 ones with its all-reduce composed by node
(--mpi-by-node, or the launch's first line naming it).
Usage: bench_flags.py PREDICT_SEEDS ALLREDUCE_CALIBRATE"""
import os
import sys
import tempfile

from command_check import check

predict_seeds, calibrate = sys.argv[1:3]


with tempfile.TemporaryDirectory() as work:
    missing_file = os.path.join(work, "no_such_cluster.json")
    BAD = [
        (["--bogus", "1"], ["not expected", "--bogus"]),
        (["--ranks", "8"], ["--ranks requires --recommend"]),
        (["--recommend"], ["--recommend", "expected --ranks P"]),
        (["--recommend", "--ranks", "abc"], ["--ranks", "expected an integer >= 1", "'abc'"]),
        (["--recommend", "--ranks", "8", "--ranks-per-node", "0"], ["--ranks-per-node", "'0'"]),
        (["--recommend", "--ranks", "8", "--intra-gbps", "-3"], ["--intra-gbps", "expected a number > 0", "'-3'"]),
        (["--recommend", "--ranks", "8", "--cluster", missing_file, "--links", "2"], ["--links", "--cluster"]),
        (["--recommend", "--ranks", "8", "--ranks", "9"], ["--ranks", "received 2"]),
        (["stray"], ["not expected", "stray"]),
        (["--mpi-by-node"], ["--mpi-by-node requires --recommend"]),
        (["--open-mpi"], ["--open-mpi requires --recommend"]),
        (["--recommend", "--ranks", "8", "--open-mpi", "--mpi-by-node"], ["excludes", "--open-mpi", "--mpi-by-node"]),
    ]
    for args, words in BAD:
        check([predict_seeds] + args, 2, words)
    # A cluster file that cannot be read is not a command-line error: exit 1, naming the file.
    check([predict_seeds, "--recommend", "--ranks", "8", "--cluster", missing_file], 1,
          ["cannot read", "no_such_cluster.json"])
    ranked = check([predict_seeds, "--recommend", "--ranks", "64", "--ranks-per-node", "8", "--top", "3"], 0,
                   ["on 64 ranks in nodes of 8", "recommend 1: algorithm="])
    assert ranked.count("recommend ") == 3, ranked
    # MPI's all-reduce composed by node prices the flat candidates (MPI's own) and the float16 wire's one
    # 4-byte agreement on the scale, nothing else, and the header says so.
    every = ["--recommend", "--ranks", "16", "--ranks-per-node", "4", "--top", "72"]
    plain = check([predict_seeds] + every, 0, ["recommend 72:"])
    composed = check([predict_seeds] + every + ["--mpi-by-node"], 0, ["; MPI's all-reduce composed by node"])
    candidates = lambda out: {line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("recommend ")}
    changed = candidates(plain) ^ candidates(composed)
    assert any("algorithm=flat " in c and "wire=float32" in c for c in changed), changed
    assert all("algorithm=flat " in c or "wire=float16" in c for c in changed), changed
    # A cluster file from before mpi_by_node is priced composed with the flag; one that says so, without.
    keys = {"ranks": 4, "ranks_per_node": 2, "links_per_node": 1, "intra_alpha": 1e-6, "intra_beta": 1e-10,
            "intra_beta_memory": 2e-10, "inter_alpha": 5e-6, "inter_beta": 8e-10, "inter_beta_memory": 9e-10,
            "mpi_allreduce": 3, "mpi_allreduce_half": 4, "mpi_reduce": 8, "mpi_reduce_half": 8, "mpi_bcast": 2,
            "mpi_from_bytes": 16 << 20}
    for wire in ("float32", "float16", "bfloat16"):
        keys.update({f"{wire}_{p}": 1e-9 for p in ("pack", "accumulate", "add", "unpack", "max_abs")})
    saved = os.path.join(work, "cluster.txt")
    with open(saved, "w") as f:
        f.write("".join(f"{k} {v}\n" for k, v in keys.items()))
    on_file = ["--recommend", "--cluster", saved, "--ranks", "16", "--ranks-per-node", "4", "--top", "72"]
    assert "composed by node" not in check([predict_seeds] + on_file, 0, ["recommend 72:"])
    flagged = check([predict_seeds] + on_file + ["--mpi-by-node"], 0, ["; MPI's all-reduce composed by node"])
    with open(saved, "a") as f:
        f.write("mpi_by_node 1\n")
    assert check([predict_seeds] + on_file, 0, ["; MPI's all-reduce composed by node"]) == flagged
    check([predict_seeds] + on_file + ["--open-mpi"], 2, ["mpi.by_node", "mpi.open_mpi", "got both"])
    # Open MPI's choice of algorithms prices the flat candidates only, and the header says so.
    opened = check([predict_seeds] + every + ["--open-mpi"], 0, ["; Open MPI's all-reduce algorithms"])
    changed = candidates(plain) ^ candidates(opened)
    assert changed and all("algorithm=flat " in c for c in changed), changed
    check([calibrate, "--rounds", "0"], 2, ["--rounds", "an integer in [1, 1000]", "'0'"])
    check([calibrate, "--rounds", "5x"], 2, ["--rounds", "'5x'"])
    check([calibrate, "--bogus"], 2, ["not expected", "--bogus", "--help lists every flag"])
    check([calibrate, "--links-per-node", "-1"], 2, ["--links-per-node", "'-1'"])
    check([calibrate, "--mpi-by-node"], 2, ["--mpi-by-node requires --replay"])
    check([calibrate, "--open-mpi"], 2, ["--open-mpi requires --replay"])
    check([calibrate, "--help"], 0, ["--first-node-only", "the others' ranks"])
    check([calibrate, "--first-node-only=maybe"], 2, ["Could not convert", "--first-node-only", "maybe"])
    # --first-node-only with pretend nodes (one process, MPI's singleton) is refused, naming the variable.
    check([calibrate, "--first-node-only"], 1, ["--first-node-only", "pretend nodes", "KUSARI_RANKS_PER_NODE=1"],
          env={**os.environ, "KUSARI_RANKS_PER_NODE": "1"})
    # --replay re-predicts a stored launch (its measured times kept) and refuses what is not one.
    check([calibrate, "--replay", missing_file], 1, ["cannot open", "no_such_cluster.json"])
    not_output = os.path.join(work, "not_output.txt")
    with open(not_output, "w") as f:
        f.write("hello\n")
    check([calibrate, "--replay", not_output], 1, ["not_output.txt", "no calibration line"])
    stored = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "cost_model",
                          "calibration_hosts_2x1_1gbit_a.txt")
    replayed = check([calibrate, "--replay", stored], 0,
                     ["replay ring_float32: predicted=", "measured=878.8 ms", "largest |error|"])
    assert replayed.count("replay ") == 23, replayed
    # The launches across hosts with the links' streaming rate measured, three of each kind: the lines
    # within 25% that docs/hosts.md's table gives (kusari's engines, then MPI's own collectives). MPICH's
    # 2 x 2 launches from before their first line named its composition by node are replayed with it, the
    # Open MPI build's with Open MPI's choice of algorithms.
    by_node = ["--mpi-by-node"]
    open_mpi = ["--open-mpi"]
    documented = {"calibration_hosts_2x1_1gbit_streams": ([], (44, 45, 24, 24)),
                  "calibration_hosts_2x1_1gbit_openmpi_streams": (open_mpi, (43, 45, 17, 24)),
                  "calibration_hosts_2x2_1gbit_openmpi_streams": (open_mpi, (45, 45, 15, 24)),
                  "calibration_hosts_2x2_1gbit_mpich": (by_node, (40, 45, 6, 24)),
                  "calibration_hosts_2x1_4gbit": ([], (45, 45, 24, 24)),
                  "calibration_hosts_2x2_4gbit": (by_node, (6, 45, 1, 24)),
                  "calibration_hosts_2x2_250mbit_mpich": (by_node, (44, 45, 7, 24))}
    for kind, (flags, expected) in documented.items():
        counts = [0, 0, 0, 0]
        for launch in "abc":
            path = os.path.join(os.path.dirname(stored), f"{kind}_{launch}.txt")
            replay = [calibrate, "--replay", path] + flags
            for line in check(replay, 0, ["replay multi_color_float32"]).splitlines():
                if not line.startswith("replay "):
                    continue
                name = line.split()[1].rstrip(":")
                error = abs(float(line.split("error=")[1].rstrip("%")))
                mpi = name.startswith(("mpi_", "naive_", "flat_"))
                counts[2 * mpi + 1] += 1
                counts[2 * mpi] += error <= 25
        assert tuple(counts) == expected, (kind, counts, expected)
    # A launch whose first line names MPI's composition by node is priced so without the flag, and the
    # composition changes MPI's own lines only.
    composed = os.path.join(os.path.dirname(stored), "calibration_hosts_2x2_250mbit_mpich_a.txt")
    with open(composed) as f:
        lines = f.read().split("\n")
    lines[0] += "; MPI's all-reduce composed by node"
    named = os.path.join(work, "named_by_node.txt")
    with open(named, "w") as f:
        f.write("\n".join(lines))
    with_flag = check([calibrate, "--replay", composed, "--mpi-by-node"], 0, ["replay flat_float16"])
    assert check([calibrate, "--replay", named], 0, ["replay flat_float16"]) == with_flag
    without = check([calibrate, "--replay", composed], 0, ["replay flat_float16"])
    # (The float16 wire's 4-byte agreement on its scale is an MPI all-reduce too: those lines may move.)
    for old_line, new_line in zip(without.splitlines(), with_flag.splitlines()):
        if old_line.startswith("replay ") and "_float16:" not in old_line:
            mpi = old_line.startswith(("replay mpi_", "replay naive_", "replay flat_"))
            assert (old_line != new_line) == mpi, (old_line, new_line)
    assert "replay flat_float16:" in "".join(set(without.splitlines()) ^ set(with_flag.splitlines()))
    # The Open MPI build's launch names Open MPI's choices in its first line: replayed as with --open-mpi.
    named = os.path.join(os.path.dirname(stored), "calibration_hosts_2x1_1gbit_openmpi_choices.txt")
    assert check([calibrate, "--replay", named], 0, []) == check([calibrate, "--replay", named, "--open-mpi"], 0, [])
    # ... and refused with MPICH's composition on top, naming both.
    check([calibrate, "--replay", named, "--mpi-by-node"], 1, ["mpi.by_node", "mpi.open_mpi", "got both"])
print("predict_seeds and allreduce_calibrate refuse every bad command line with its flag named")
