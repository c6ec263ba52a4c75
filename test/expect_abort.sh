#!/usr/bin/env bash
# Runs `mpiexec -n 2 program` and passes when the job fails within 30 s (not by timeout) and its output
# names rank 1 and its message.
set -uo pipefail
mpiexec=$1
program=$2
start=$(date +%s)
output=$(timeout 60 "$mpiexec" -n 2 "$program" 2>&1)
status=$?
elapsed=$(( $(date +%s) - start ))
echo "$output"
echo "exit status $status after ${elapsed} s"
[ "$status" -ne 0 ] || { echo "expected the job to fail"; exit 1; }
[ "$status" -ne 124 ] || { echo "the job hung until the timeout"; exit 1; }
[ "$elapsed" -le 30 ] || { echo "the job took too long to end"; exit 1; }
grep -q "kusari: rank 1: rank one failed on purpose" <<< "$output" || { echo "missing the rank's message"; exit 1; }
