#!/usr/bin/env bash
# Installs what is missing, builds, and trains the default recipe on Fashion-MNIST data-parallel over two
# processes (`mpiexec -n 2`, one thread each: the two cores of this machine) with a progress bar.
# Extra arguments go to the training command (see `build/recipes/fashion_mnist --help`); KUSARI_RANKS
# sets the number of processes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_dependencies.sh
[ -f build/build.ninja ] || meson setup build --wrap-mode=nodownload >/dev/null
ninja -C build recipes/fashion_mnist
# The launcher of the MPI the build linked (where Debian has both, plain mpiexec may be the other's).
launcher=mpiexec
if ldd build/lib/libkusari.so | grep -q libmpich; then
  ! command -v mpiexec.mpich >/dev/null || launcher=mpiexec.mpich
elif command -v mpiexec.openmpi >/dev/null; then
  launcher=mpiexec.openmpi
fi
# Rank 0's output reaches the terminal through mpiexec's pipe: --progress bar redraws the bar in place anyway.
exec "$launcher" -n "${KUSARI_RANKS:-2}" ./build/recipes/fashion_mnist --threads 1 --progress bar "$@"
