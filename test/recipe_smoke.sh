#!/usr/bin/env bash
# Smoke test of the training command: on a tiny synthetic IDX data set, `mpiexec -n 2` trains two
# epochs (a log that parses with one entry per epoch, plots, a snapshot per epoch), resumes from the
# last snapshot for a third, and one process without mpiexec trains too.
# Usage: recipe_smoke.sh MPIEXEC RECIPE
set -euo pipefail
mpiexec=$1
recipe=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# 40 training and 17 test examples of 28x28 images whose brightest row is the label.
python3 - "$dir/data" <<'PY'
import os, struct, sys
out = sys.argv[1]
os.makedirs(out)
def write(prefix, n):
    labels = [(i * 7) % 10 for i in range(n)]
    images = bytearray()
    for i, label in enumerate(labels):
        for row in range(28):
            value = 250 if row == 2 * label + 3 else (i * 31 + row * 17) % 60
            images += bytes([value]) * 28
    with open(os.path.join(out, prefix + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28) + images)
    with open(os.path.join(out, prefix + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + bytes(labels))
write("train", 40)
write("t10k", 17)
PY

common=(--dataset "$dir/data" --batchsize 5 --unit 16 --threads 1)
# Checks that <out>/log is a JSON list of `entries` epochs whose last one is at iteration `last`.
check_log() {
  python3 - "$1/log" "$2" "$3" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
entries, last = int(sys.argv[2]), int(sys.argv[3])
assert len(log) == entries, f"expected {entries} log entries, got {len(log)}"
assert [e["epoch"] for e in log] == list(range(1, entries + 1)), log
assert log[-1]["iteration"] == last, log[-1]
for e in log:
    for key in ("main/loss", "main/accuracy", "validation/main/loss", "validation/main/accuracy"):
        assert key in e, f"{key} missing from {e}"
    assert 0 <= e["validation/main/accuracy"] <= 1, e
print("log ok:", json.dumps(log[-1], sort_keys=True))
PY
}

# 20 examples per rank in batches of 5: 4 iterations per epoch.
"$mpiexec" -n 2 "$recipe" "${common[@]}" --epoch 2 --out "$dir/parallel"
check_log "$dir/parallel" 2 8
for file in snapshot_iter_4 snapshot_iter_8 loss.svg accuracy.svg; do
  [ -f "$dir/parallel/$file" ] || { echo "missing $dir/parallel/$file"; exit 1; }
done

"$mpiexec" -n 2 "$recipe" "${common[@]}" --epoch 3 --out "$dir/parallel" --resume "$dir/parallel/snapshot_iter_8"
check_log "$dir/parallel" 3 12
[ -f "$dir/parallel/snapshot_iter_12" ] || { echo "the resumed run wrote no snapshot"; exit 1; }
[ ! -f "$dir/parallel/snapshot_iter_4" ] || { echo "n_retains = 2 should have removed snapshot_iter_4"; exit 1; }

# One process, no mpiexec: 40 examples in batches of 5.
"$recipe" "${common[@]}" --epoch 1 --out "$dir/single"
check_log "$dir/single" 1 8
echo "recipe smoke test passed"
