#!/usr/bin/env bash
# Builds kusari's libFuzzer targets (test/fuzz) with clang, AddressSanitizer and UBSan in the sanitized
# build directory (builddir-sanitize, see setup_sanitized_build.sh), writes their seed corpora
# (test/fuzz/make_seeds.py; the snapshot target writes its own), and runs each target for SECONDS
# (default 60), printing one line per target:
#   fuzz_<target>: executions=N crashes=0 corpus=M
# Exits non-zero when a target crashes, leaks, takes over 1 s on one input, or allocates over 2 GB at
# once (libFuzzer's -timeout=1 and -malloc_limit_mb=2048); the input is kept under
# builddir-sanitize/fuzz-artifacts/ and the target's log under builddir-sanitize/fuzz-logs/; an input
# that crashed a target once belongs in test/fuzz/regressions/<target>/, which every run replays.
# Usage: scripts/fuzz.sh [SECONDS [TARGET...]]
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(idx npy npz image label_list snapshot recipe_flags)
build=builddir-sanitize
bash scripts/setup_sanitized_build.sh || exit 1
ninja -C "$build" "${targets[@]/#/test/fuzz/fuzz_}" || exit 1
corpus=$build/fuzz-corpus
mkdir -p "$build/fuzz-artifacts" "$build/fuzz-logs"
# As in scripts/sanitize.sh: leaks inside MPICH, hwloc, OpenMP and OpenBLAS are not kusari's.
export LSAN_OPTIONS=suppressions=$PWD/test/sanitizer_leaks.supp:print_suppressions=0
/usr/bin/python3 test/fuzz/make_seeds.py "$corpus/seeds" || exit 1
if [[ " ${targets[*]} " == *" snapshot "* ]]; then
  KUSARI_FUZZ_WRITE_SEEDS=$corpus/seeds/snapshot "$build/test/fuzz/fuzz_snapshot" || exit 1
fi
failed=0
for target in "${targets[@]}"; do
  mkdir -p "$corpus/$target"
  log=$build/fuzz-logs/$target.log
  # Inputs that once crashed a target (test/fuzz/regressions/<target>) run first, every time.
  regressions=()
  [ ! -d "test/fuzz/regressions/$target" ] || regressions=("test/fuzz/regressions/$target")
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/test/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=1 -malloc_limit_mb=2048 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/${target}-" \
    "$corpus/$target" "$corpus/seeds/$target" "${regressions[@]}" > "$log" 2>&1
  status=$?
  executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  crashes=0
  [ "$status" -eq 0 ] || { crashes=1; failed=1; }
  echo "fuzz_$target: executions=${executions:-0} crashes=$crashes corpus=$(ls "$corpus/$target" | wc -l)"
  if [ "$status" -ne 0 ]; then
    grep -E "ERROR|SUMMARY|Test unit written|==[0-9]+==" "$log" | head -20
  fi
done
exit "$failed"
