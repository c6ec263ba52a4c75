#!/usr/bin/env bash
# The emulated leg: builds kusari with its CUDA backend emulated on the host (-Dcuda-emulation=true: the
# kernel sources compiled as C++ and run on the CPU's threads, kusari's emulation of the CUDA runtime and
# of cuBLASLt's product in place of NVIDIA's libraries; lib/kernels/cuda/emulation) in build-emulated, and
# runs there the CUDA device suite (kusari's kernels against the CPU's, device memory handed out as NaN;
# the cuDNN cases skip), the emulation's own test, the NCCL path's cases with two ranks' cuda:0 arrays,
# the float16 wire's automatic factors made on cuda:0, the host suites with every array on cuda:0 but for
# their cuDNN cases, and three recipes' MLP on cuda:0 against the CPU under mpiexec -n 2 (the meson suite
# emulated_cuda, test/meson.build). Needs the CUDA toolkit's headers, cuDNN and NCCL under
# $KUSARI_CUDA_ROOT (default /usr/local/cuda), neither nvcc nor a GPU. The last line is "N passed,
# N failed, N skipped" (with KUSARI_CASE_RECORD=FILE every case is appended to FILE as well).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${KUSARI_EMULATION_BUILD_DIR:-build-emulated}
cuda_root=${KUSARI_CUDA_ROOT:-/usr/local/cuda}
[ -f "$build/build.ninja" ] || meson setup "$build" --wrap-mode=nodownload -Dcuda=enabled -Dcuda-root="$cuda_root" \
  -Dcuda-emulation=true >/dev/null || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
suites=(activation arithmetic array_manipulation autograd ghost_batch_normalization initializers link links_layers
  loss matmul mixed_precision noise normalization npz optimizers pooling random reduction routines)
targets=(test/test_cuda_device test/test_cuda_emulation test/test_cuda_nccl test/test_wire_precision
  "${suites[@]/#/test/test_}" recipes/fashion_mnist recipes/jia2018 recipes/kumar2017)
tests=(cuda_device cuda_emulation cuda_nccl_emulated_np2 wire_precision "${suites[@]/%/_emulated_cuda}"
  device_matrix_emulated_cuda_np2)
ninja -C "$build" "${targets[@]}" >/dev/null || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
KUSARI_POISON=1 meson test -C "$build" --no-rebuild --num-processes 1 --print-errorlogs "${tests[@]}"
status=$?
python3 scripts/summarize_tests.py meson emulated "$build/meson-logs/testlog.json" \
  --record "${KUSARI_CASE_RECORD:-}" || status=1
exit $status
