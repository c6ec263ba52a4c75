#!/usr/bin/env bash
# Configures builddir-sanitize (once): clang-14 with AddressSanitizer and UBSan, libFuzzer's coverage
# instrumentation, the doctest suites and the fuzz targets. scripts/sanitize.sh runs the suites from it,
# scripts/fuzz.sh the targets (sanitize.sh builds everything, fuzz.sh only the targets). Installs clang, its runtimes and OpenMP
# first if they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=builddir-sanitize
bash scripts/install_dependencies.sh sanitizers
[ -f "$build/build.ninja" ] && exit 0
setup_log=$(mktemp)
# -O2 with line tables only: reports name files and lines, and the build is much quicker than with
# full debug information.
# Without the CUDA backend: nvcc compiles with g++, outside the sanitizers (test.sh builds it).
# meson puts ccache before a compiler it finds itself, not before one named in CC/CXX: name it too.
launcher=""
! command -v ccache > /dev/null || launcher="ccache "
CC="${launcher}clang-14" CXX="${launcher}clang++-14" meson setup "$build" --wrap-mode=nodownload -Dfuzz=true -Dtests=true -Dbenchmarks=false -Dcuda=disabled \
  -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=plain \
  "-Dcpp_args=['-O2', '-gline-tables-only', '-fsanitize=fuzzer-no-link']" > "$setup_log" 2>&1 ||
  { cat "$setup_log"; exit 1; }
