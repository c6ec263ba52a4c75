#!/usr/bin/env bash
# Installs kusari into a staging directory and builds test/outside_project against it with pkg-config,
# by the compiler COMPILER with the sanitizers SANITIZE (meson's b_sanitize: none or e.g. address,undefined).
# Usage: install_test.sh SOURCE_DIR BUILD_DIR COMPILER SANITIZE
set -euo pipefail
source_dir=$1
build_dir=$2
compiler=$3
sanitize=$4
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
meson install -C "$build_dir" --destdir "$stage" --quiet
pc=$(find "$stage" -name kusari.pc | head -n 1)
[ -n "$pc" ] || { echo "kusari.pc was not installed"; exit 1; }
prefix=$(sed -n 's/^prefix=//p' "$pc")
sed -i "s|^prefix=.*|prefix=$stage$prefix|" "$pc"
export PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir kusari)
CXX=$compiler meson setup "$stage/consumer-build" "$source_dir/test/outside_project" -Db_sanitize="$sanitize" \
  >/dev/null
ninja -C "$stage/consumer-build" | tail -n 20
LD_LIBRARY_PATH=$libdir "$stage/consumer-build/consumer"
