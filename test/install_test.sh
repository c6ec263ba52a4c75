#!/usr/bin/env bash
# Installs kusari into a staging directory and checks what an outside program gets from it, built by
# the compiler COMPILER with the sanitizers SANITIZE (meson's b_sanitize: none or e.g. address,undefined):
# - test/outside_project built by meson through pkg-config (C++20), and again by the compiler alone
#   with -std=c++2b (C++23, by the name gcc 12 and clang 14 both take) from `pkg-config --cflags
#   --libs` (kusari.pc must not pull the standard back);
# - the same project built by CMake through find_package(kusari) and the target kusari::kusari;
# - the installed headers are exactly the source tree's headers outside detail/ (the interop ones
#   only where meson found Eigen or xtensor), and all of them compile together without detail/;
# - libkusari.so exports the API and hides the internals.
# Usage: install_test.sh SOURCE_DIR BUILD_DIR COMPILER SANITIZE
set -euo pipefail
source_dir=$1
build_dir=$2
compiler=$3
sanitize=$4
sanitize_flags=()
[ "$sanitize" = none ] || sanitize_flags=("-fsanitize=$sanitize")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fail() { echo "install_test: $*"; exit 1; }
meson install -C "$build_dir" --destdir "$stage" --quiet
pc=$(find "$stage" -name kusari.pc | head -n 1)
[ -n "$pc" ] || fail "kusari.pc was not installed"
prefix=$(sed -n 's/^prefix=//p' "$pc")
sed -i "s|^prefix=.*|prefix=$stage$prefix|" "$pc"
export PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
libdir=$(pkg-config --variable=libdir kusari)
includedir=$(pkg-config --variable=includedir kusari)

# kusari.pc: no absolute paths to dependencies' libraries, no -std flag.
! grep -E '^Libs.*(/[^ ]*\.(so|a)|-l:)' "$pc" || fail "kusari.pc names a library by its path"
! grep -E '^Cflags:.*-std=' "$pc" || fail "kusari.pc sets the C++ standard"
ls "$libdir"/libkusari.so.[0-9]*.[0-9]* >/dev/null || fail "no versioned libkusari.so in $libdir"
soname=$(objdump -p "$libdir/libkusari.so" | sed -n 's/^ *SONAME *//p')
[ "$soname" = "libkusari.so.$(pkg-config --modversion kusari | cut -d. -f1,2)" ] || fail "unexpected SONAME '$soname'"

CXX=$compiler meson setup "$stage/consumer-build" "$source_dir/test/outside_project" -Db_sanitize="$sanitize" \
  >/dev/null
ninja -C "$stage/consumer-build" | tail -n 20
LD_LIBRARY_PATH=$libdir "$stage/consumer-build/consumer"

# shellcheck disable=SC2046
"$compiler" -std=c++2b "${sanitize_flags[@]}" "$source_dir/test/outside_project/main.cpp" \
  $(pkg-config --cflags --libs kusari) -o "$stage/consumer23"
LD_LIBRARY_PATH=$libdir "$stage/consumer23" >/dev/null
echo "pkg-config consumer: C++20 through meson and C++23 by hand"

cmake_flags=()
[ "$sanitize" = none ] || cmake_flags=("-DCMAKE_CXX_FLAGS=-fsanitize=$sanitize" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitize")
cmake -S "$source_dir/test/outside_project" -B "$stage/cmake-build" -DCMAKE_CXX_COMPILER="$compiler" \
  -DCMAKE_PREFIX_PATH="$stage$prefix" "${cmake_flags[@]}" >/dev/null
cmake --build "$stage/cmake-build" >/dev/null
LD_LIBRARY_PATH=$libdir "$stage/cmake-build/consumer" >/dev/null
echo "CMake consumer: find_package(kusari 0.1) and kusari::kusari"

# The public surface: every header outside detail/, nothing else.
find "$includedir/kusari" -path '*/detail*' | grep . && fail "detail/ headers were installed"
(cd "$includedir/kusari" && find . -name '*.h' | sort) > "$stage/installed.txt"
(cd "$source_dir/lib" && find . -name '*.h' -not -path '*/detail/*' | sort) > "$stage/expected.txt"
for package in eigen xtensor; do
  grep -q "^./interop/$package.h$" "$stage/installed.txt" || sed -i "\|^./interop/$package.h$|d" "$stage/expected.txt"
done
diff "$stage/expected.txt" "$stage/installed.txt" || fail "the installed headers differ from the public ones"
sed 's|^\./\(.*\)|#include <kusari/\1>|' "$stage/installed.txt" > "$stage/all_headers.cpp"
# shellcheck disable=SC2046
"$compiler" -std=c++20 -fsyntax-only $(pkg-config --cflags kusari) \
  $(pkg-config --cflags eigen3 2>/dev/null || true) "$stage/all_headers.cpp"
echo "$(wc -l < "$stage/installed.txt") public headers installed, compiling together without detail/"

# Exports: the API's entry points are there, internals of the distributed layer are not.
exports=$(nm -DC --defined-only "$libdir/libkusari.so")
for symbol in 'kusari::Variable::backward' 'kusari::version' 'kusari::distributed::create_communicator'; do
  grep -qF "$symbol" <<< "$exports" || fail "libkusari.so does not export $symbol"
done
for symbol in 'kusari::distributed::stall_inspector_running' 'kusari::distributed::check_wire_dtype'; do
  ! grep -qF "$symbol" <<< "$exports" || fail "libkusari.so exports the internal $symbol"
done
echo "libkusari.so: $(wc -l <<< "$exports") exported symbols, internals hidden"
