#!/usr/bin/env bash
# Builds kusari's libFuzzer targets (test/fuzz) with clang, AddressSanitizer and UBSan in the sanitized
# build directory (builddir-sanitize, see setup_sanitized_build.sh), writes their seed corpora
# (test/fuzz/make_seeds.py, deterministic; the snapshot target writes its own), and fuzzes each target,
# as many at once as there are cores, printing one line per target:
#   fuzz_<target>: executions=N crashes=0 corpus=M
# Two ways to run:
#   fuzz.sh [SECONDS [TARGET...]]  explores for SECONDS (default 60) per target from the seeds, the
#       inputs earlier runs found (builddir-sanitize/fuzz-corpus) and the regressions, with libFuzzer's
#       1 s limit per input: for people and long sittings, a new set of inputs each time
#   fuzz.sh --replay RUNS [TARGET...]  what CI runs: the seeds and the regressions, then RUNS
#       executions in all from mutations under a fixed seed (-seed=1), new inputs going to a fresh
#       directory, with a limit of 10 s per input so that a loaded machine does not fail it. The same
#       build makes the same inputs every run for idx, npy and image; for npz, snapshot and recipe_flags
#       the library's temporary file names hold the process id (serializers::AtomicFile), which the
#       comparison tracing feeds into mutations, so their later inputs vary a little, and label_list's
#       did too between two CI runs on 2026-12-05 (39 and 34 new inputs; why is not found yet)
# The last line is "N passed, N failed, N skipped", a target being one case; with KUSARI_CASE_RECORD=FILE
# they are appended to FILE as well (scripts/summarize_tests.py). Exits non-zero when a target crashes, leaks, exceeds its time limit on one input, or allocates over
# 2 GB at once (-malloc_limit_mb=2048); the input is kept under builddir-sanitize/fuzz-artifacts/ and
# the target's log under builddir-sanitize/fuzz-logs/; an input that crashed a target once belongs in
# test/fuzz/regressions/<target>/, which every run replays.
set -uo pipefail
cd "$(dirname "$0")/.."
budget=(-max_total_time="${1:-60}") time_limit=1 part=fuzz work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
replay=false
if [ "${1:-}" = --replay ]; then
  budget=(-runs="${2:?--replay needs a number of runs}" -seed=1) time_limit=10 part="fuzz replay" replay=true
  shift
fi
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(idx npy npz image label_list snapshot recipe_flags)
build=$PWD/builddir-sanitize  # absolute: the targets work in a directory of their own (fuzz_input.h)
bash scripts/setup_sanitized_build.sh || exit 1
ninja -C "$build" "${targets[@]/#/test/fuzz/fuzz_}" || exit 1
corpus=$build/fuzz-corpus
mkdir -p "$build/fuzz-artifacts" "$build/fuzz-logs"
# As in scripts/sanitize.sh: the suppressions' file (empty of entries) and no hwloc PCI plugin.
export LSAN_OPTIONS=suppressions=$PWD/test/sanitizer_leaks.supp:print_suppressions=0
export HWLOC_PLUGINS_BLACKLIST=hwloc_pci
/usr/bin/python3 test/fuzz/make_seeds.py "$corpus/seeds" || exit 1
if [[ " ${targets[*]} " == *" snapshot "* ]]; then
  KUSARI_FUZZ_WRITE_SEEDS=$corpus/seeds/snapshot "$build/test/fuzz/fuzz_snapshot" || exit 1
fi
# One target: its line ("fuzz_<target>: executions=N crashes=C corpus=K") to $work/<target>.line, and
# on a crash the log's error lines after it.
fuzz_one() {
  local target=$1 explored=$corpus/$1 log=$build/fuzz-logs/$1.log status executions crashes=0
  ! $replay || explored=$work/$target
  mkdir -p "$explored"
  # Inputs that once crashed a target (test/fuzz/regressions/<target>) run first, every time.
  local regressions=()
  [ ! -d "test/fuzz/regressions/$target" ] || regressions=("$PWD/test/fuzz/regressions/$target")
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/test/fuzz/fuzz_$target" "${budget[@]}" -timeout="$time_limit" -malloc_limit_mb=2048 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/${target}-" \
    "$explored" "$corpus/seeds/$target" "${regressions[@]}" > "$log" 2>&1
  status=$?
  executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  [ "$status" -eq 0 ] || crashes=1
  echo "fuzz_$target: executions=${executions:-0} crashes=$crashes corpus=$(ls "$explored" | wc -l)" > "$work/$target.line"
  [ "$status" -eq 0 ] || grep -E "ERROR|SUMMARY|Test unit written|==[0-9]+==" "$log" | head -20 > "$work/$target.errors"
}
# The targets run as many at once as there are cores (each is one process on one core), their lines
# printed in the order given.
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
  fuzz_one "$target" &
done
wait
failed=0
for target in "${targets[@]}"; do
  tee -a "$work/lines" < "$work/$target.line"
  grep -q "crashes=0" "$work/$target.line" || { failed=1; cat "$work/$target.errors"; }
done
python3 scripts/summarize_tests.py fuzz "$part" "$work/lines" --record "${KUSARI_CASE_RECORD:-}" || failed=1
exit "$failed"
