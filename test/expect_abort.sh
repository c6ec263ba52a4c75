#!/usr/bin/env bash
# Usage: expect_abort.sh MPIEXEC PROGRAM SECONDS PATTERN...
# Runs `mpiexec -n 2 PROGRAM` and passes when the job fails within SECONDS (not by the 120 s timeout)
# and its output holds every PATTERN (grep -E).
set -uo pipefail
mpiexec=$1
program=$2
limit=$3
shift 3
start=$(date +%s)
output=$(timeout 120 "$mpiexec" -n 2 "$program" 2>&1)
status=$?
elapsed=$(( $(date +%s) - start ))
echo "$output"
echo "exit status $status after ${elapsed} s"
[ "$status" -ne 0 ] || { echo "expected the job to fail"; exit 1; }
[ "$status" -ne 124 ] || { echo "the job hung until the timeout"; exit 1; }
[ "$elapsed" -le "$limit" ] || { echo "the job took more than $limit s to end"; exit 1; }
for pattern in "$@"; do
  grep -qE -- "$pattern" <<< "$output" || { echo "missing from the output: $pattern"; exit 1; }
done
