#!/usr/bin/env bash
# Builds kusari (if needed; a new build directory is set up with $KUSARI_MESON_OPTIONS) and runs every
# test suite; the last line is "N passed, N failed, N skipped" over distinct cases (the loopback
# suite's on a line of its own above it; scripts/summarize_tests.py); with KUSARI_CASE_RECORD=FILE every
# case is appended to FILE as well.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${KUSARI_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" --wrap-mode=nodownload ${KUSARI_MESON_OPTIONS:-} >/dev/null || exit 1
ninja -C "$build" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
meson test -C "$build" --num-processes "${KUSARI_TEST_PROCESSES:-2}" --print-errorlogs
status=$?
python3 scripts/summarize_tests.py meson plain "$build/meson-logs/testlog.json" --suite-part loopback=loopback \
  --record "${KUSARI_CASE_RECORD:-}" || status=1
exit $status
