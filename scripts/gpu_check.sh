#!/usr/bin/env bash
# The check of the CUDA backend on a lent GPU machine, in two steps.
#   scripts/gpu_check.sh prepare   here: builds with -Dcuda=enabled and packs the device programs, the
#                                  library and every shared library they link that the GPU machine
#                                  lacks (MPICH, oneDNN, OpenBLAS, TurboJPEG, ...) into
#                                  gpu_carry/bundle.tar.xz (about 25 MB; git ignores gpu_carry/).
#   scripts/gpu_check.sh run       there (the device tool's run, carrying gpu_carry): unpacks the
#                                  bundle, finds CUDA's libraries (the toolkit's, PyTorch's wheels'
#                                  cuDNN, cuBLAS and NCCL), runs the CUDA device suite and writes each
#                                  program's output to $OUT (or gpu_check_out/).
# The last line of `run` is "N passed, N failed" over the programs it ran.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${KUSARI_BUILD_DIR:-build}
carry=gpu_carry
# The programs that run on the GPU, as paths under the build directory.
programs=(test/test_cuda_device)

prepare() {
  set -e
  [ -f "$build/build.ninja" ] || meson setup "$build" --wrap-mode=nodownload -Dcuda=enabled >/dev/null
  grep -q "KUSARI_WITH_CUDA" "$build/build.ninja" || { echo "$build is not configured with -Dcuda=enabled" >&2; exit 1; }
  ninja -C "$build" "${programs[@]}" >/dev/null
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/bin" "$stage/lib" "$carry"
  for p in "${programs[@]}"; do cp "$build/$p" "$stage/bin/"; done
  # Every library the programs link except the C and C++ runtimes (the GPU machine's are newer) and
  # CUDA's own (it has its own toolkit and PyTorch's wheels).
  ldd "${programs[@]/#/$build/}" | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libpthread|librt|libdl|libgcc_s|libstdc\+\+)\.so|/usr/local/cuda/' |
    while read -r lib; do cp -L "$lib" "$stage/lib/"; done
  strip --strip-unneeded "$stage"/lib/libkusari.so* "$stage"/bin/*
  tar -C "$stage" -cf - bin lib | xz -T0 -6 > "$carry/bundle.tar.xz.tmp"
  mv "$carry/bundle.tar.xz.tmp" "$carry/bundle.tar.xz"
  rm -rf "$stage"
  echo "$carry/bundle.tar.xz: $(du -h "$carry/bundle.tar.xz" | cut -f1) (${programs[*]})"
}

run() {
  local out=${OUT:-gpu_check_out} here
  here=$(mktemp -d)
  mkdir -p "$out"
  [ -f "$carry/bundle.tar.xz" ] || { echo "no $carry/bundle.tar.xz: run 'scripts/gpu_check.sh prepare' first"; echo "0 passed, 1 failed"; exit 1; }
  python3 -c "import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$carry/bundle.tar.xz" "$here"
  # CUDA's libraries: the toolkit's, and the nvidia-* wheels beside PyTorch.
  local wheels
  wheels=$(python3 -c "import glob, os, site; print(':'.join(sorted(glob.glob(os.path.join(site.getsitepackages()[0], 'nvidia', '*', 'lib')))))" 2>/dev/null || true)
  export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:${wheels}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1 || true
  local passed=0 failed=0 name missing
  for p in "${programs[@]}"; do
    name=$(basename "$p")
    missing=$(ldd "$here/bin/$name" | grep "not found" || true)
    if [ -n "$missing" ]; then
      echo "$name: libraries not found: $missing" | tee "$out/$name.log"
      failed=$((failed + 1))
      continue
    fi
    if "$here/bin/$name" --duration=true > "$out/$name.log" 2>&1; then
      passed=$((passed + 1))
      echo "$name: passed ($(tail -3 "$out/$name.log" | head -1))"
    else
      failed=$((failed + 1))
      echo "$name: failed; the end of its output:"
      tail -40 "$out/$name.log"
    fi
  done
  rm -rf "$here"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: scripts/gpu_check.sh prepare|run" >&2; exit 2 ;;
esac
