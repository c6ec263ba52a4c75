#!/usr/bin/env bash
# The emulated leg: builds kusari with its CUDA backend emulated on the host (-Dcuda-emulation=true: the
# kernel sources compiled as C++ and run on the CPU's threads, kusari's emulation of the CUDA runtime and
# of cuBLASLt's product, cuDNN and NCCL in place of NVIDIA's libraries; lib/kernels/cuda/emulation) in
# build-emulated, and runs there the CUDA device suite (kusari's kernels and cuDNN calls against the CPU's,
# device memory handed out as NaN), the emulation's own test (its threads, streams, cuDNN and NCCL), the
# NCCL path's cases with cuda:0 arrays under mpiexec with 2, 3 and 4 ranks (through the emulation's NCCL),
# the float16 wire's automatic factors made on cuda:0, the loopback suites with every array on cuda:0, and
# three recipes' MLP and ResNet-20 on cuda:0 against the CPU under mpiexec -n 2 (the meson suite
# emulated_cuda, test/meson.build). Needs the CUDA toolkit's headers, cuDNN's and NCCL's under
# $KUSARI_CUDA_ROOT (default /usr/local/cuda), neither nvcc nor a GPU. Two tests run at a time
# ($KUSARI_TEST_PROCESSES, as scripts/test.sh): each emulated launch runs on one thread. The last line is
# "N passed, N failed, N skipped" (with KUSARI_CASE_RECORD=FILE every case is appended to FILE as well).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${KUSARI_EMULATION_BUILD_DIR:-build-emulated}
cuda_root=${KUSARI_CUDA_ROOT:-/usr/local/cuda}
[ -f "$build/build.ninja" ] || meson setup "$build" --wrap-mode=nodownload -Dcuda=enabled -Dcuda-root="$cuda_root" \
  -Dcuda-emulation=true >/dev/null || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
# The tests: the meson suite emulated_cuda (test/meson.build names its members) and two of the plain ones;
# the targets: the programs their commands name (a path in the build directory, or one of the targets a
# test depends on).
tests=(cuda_device cuda_emulation)
mapfile -t -O 2 tests < <(meson introspect "$build" --tests |
  python3 -c 'import json, sys; print("\n".join(t["name"] for t in json.load(sys.stdin) if "kusari:emulated_cuda" in t["suite"]))')
mapfile -t targets < <(meson introspect "$build" --tests | python3 -c '
import json, os, sys
build, wanted = os.path.realpath(sys.argv[1]), set(sys.argv[2:])
paths = set()
for t in json.load(sys.stdin):
    if t["name"] not in wanted:
        continue
    depends = {d.split("@@")[1].split("@")[0] for d in t.get("depends", [])}
    for word in t["cmd"]:
        path = os.path.realpath(os.path.join(build, word))
        if path.startswith(build + os.sep) and (os.path.isabs(word) or os.path.basename(word) in depends):
            paths.add(os.path.relpath(path, build))
print("\n".join(sorted(paths)))' "$build" "${tests[@]}")
ninja -C "$build" "${targets[@]}" >/dev/null || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
KUSARI_POISON=1 meson test -C "$build" --no-rebuild --num-processes "${KUSARI_TEST_PROCESSES:-2}" --print-errorlogs "${tests[@]}"
status=$?
python3 scripts/summarize_tests.py meson emulated "$build/meson-logs/testlog.json" \
  --record "${KUSARI_CASE_RECORD:-}" || status=1
exit $status
