#!/usr/bin/env bash
# Usage: expect_clean_exit.sh STATUS PATTERN COMMAND...
# Runs COMMAND (one process, no mpiexec) and passes when it exits with STATUS within 60 s, its output
# holds PATTERN (grep -E), and nothing else follows from MPI: no assertion, backtrace or abort report.
set -uo pipefail
want=$1
pattern=$2
shift 2
output=$(timeout 60 "$@" 2>&1)
status=$?
echo "$output"
echo "exit status $status"
[ "$status" -eq "$want" ] || { echo "expected exit status $want"; exit 1; }
grep -qE -- "$pattern" <<< "$output" || { echo "missing from the output: $pattern"; exit 1; }
if grep -qE -- "Assertion failed|pthread_mutex|Abort\(|libmpich" <<< "$output"; then
  echo "MPI noise after the error message"
  exit 1
fi
