#!/usr/bin/env bash
# Builds every doctest suite, tool and recipe with AddressSanitizer and UBSan (builddir-sanitize, see
# setup_sanitized_build.sh) and runs the whole suite from there, MPI suites included: a memory error,
# undefined behaviour or a leak ends the process it happens in with status 86, which fails its test.
# No leak is suppressed (test/sanitizer_leaks.supp says when one may be, by its exact frame); hwloc's PCI
# plugin, which leaks and is unloaded before LeakSanitizer could name it, is not loaded (the CPU suites
# need no PCI topology).
# The last line is "N passed, N failed, N skipped" over distinct cases (scripts/summarize_tests.py);
# with KUSARI_CASE_RECORD=FILE every case is appended to FILE as well.
set -uo pipefail
cd "$(dirname "$0")/.."
build=builddir-sanitize
bash scripts/setup_sanitized_build.sh || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
ninja -C "$build" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
export ASAN_OPTIONS=detect_leaks=1:exitcode=86:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86
export LSAN_OPTIONS=suppressions=$PWD/test/sanitizer_leaks.supp:print_suppressions=0
export HWLOC_PLUGINS_BLACKLIST=hwloc_pci
# Instrumented code runs 2-5 times slower: every test gets four times its usual time limit. The device
# matrix (some 80 short trainings, 4 minutes plain) and the golden logs (whose stored values are the plain
# build's) run in the plain suite only: under the sanitizers the loopback suites and the recipes' own
# tests go through the same code.
meson test -C "$build" --num-processes "${KUSARI_TEST_PROCESSES:-2}" --timeout-multiplier 4 --print-errorlogs \
  --no-suite device_matrix --no-suite golden
status=$?
python3 scripts/summarize_tests.py meson sanitized "$build/meson-logs/testlog.json" \
  --record "${KUSARI_CASE_RECORD:-}" || status=1
exit $status
