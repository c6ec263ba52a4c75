#!/usr/bin/env bash
# Usage: expect_leak.sh PROGRAM MODE
# Runs test/leak_on_purpose in MODE (openmp or mpi) under LeakSanitizer with scripts/sanitize.sh's
# settings and passes when the leak is reported: the program fails and the report names the function
# that lost the memory, though the stack passes through OpenMP's or MPICH's frames.
set -uo pipefail
output=$("$1" "$2" 2>&1)
status=$?
echo "$output" | head -40
echo "exit status $status"
[ "$status" -ne 0 ] || { echo "expected LeakSanitizer to fail the program"; exit 1; }
grep -q "ERROR: LeakSanitizer: detected memory leaks" <<< "$output" || { echo "no leak report"; exit 1; }
grep -q "lose_a_block_of_kusari" <<< "$output" || { echo "the report does not name the leaking function"; exit 1; }
