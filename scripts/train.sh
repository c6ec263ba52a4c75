#!/usr/bin/env bash
# Installs what is missing, builds, and trains the default recipe on Fashion-MNIST with a progress bar.
# Extra arguments go to the training command (see `build/recipes/fashion_mnist --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_dependencies.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build recipes/fashion_mnist
exec ./build/recipes/fashion_mnist "$@"
