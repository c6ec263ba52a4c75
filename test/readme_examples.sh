#!/usr/bin/env bash
# Compiles and runs every C++ block of README.md and docs/*.md against the library in the build tree, by the
# compiler COMPILER with the sanitizers SANITIZE (meson's b_sanitize: none or e.g. address,undefined).
# Usage: readme_examples.sh SOURCE_DIR BUILD_DIR COMPILER SANITIZE
set -euo pipefail
source_dir=$1
build_dir=$2
compiler=$3
sanitize_flags=()
[ "$4" = none ] || sanitize_flags=("-fsanitize=$4")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$source_dir/README.md" "$source_dir"/docs/*.md <<'PY'
import re, sys
blocks = [block for path in sys.argv[2:] for block in re.findall(r"```cpp\n(.*?)```", open(path).read(), re.S)]
for i, block in enumerate(blocks):
    open(f"{sys.argv[1]}/example_{i}.cpp", "w").write(block)
PY
count=0
for example in "$work"/example_*.cpp; do
  # The interop examples need Eigen and xtensor (Debian libeigen3-dev, xtensor-dev).
  interop_flags=()
  if grep -q '<kusari/interop/' "$example"; then
    if ! pkg-config --exists eigen3 xtensor; then
      echo "skipped $(basename "$example"): Eigen or xtensor is not installed"
      continue
    fi
    read -r -a interop_flags <<< "$(pkg-config --cflags eigen3 xtensor)"
  fi
  "$compiler" -std=c++20 "${sanitize_flags[@]}" -I"$source_dir/include" "${interop_flags[@]}" "$example" \
    -L"$build_dir/lib" -lkusari -Wl,-rpath,"$build_dir/lib" -o "${example%.cpp}"
  "${example%.cpp}" > "${example%.cpp}.out"
  count=$((count + 1))
done
[ "$count" -gt 0 ] || { echo "README.md and docs/ have no C++ example"; exit 1; }
echo "$count examples of README.md and docs/ compiled and ran"
