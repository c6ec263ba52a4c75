#!/usr/bin/env bash
# kusari as a subproject of test/subproject_parent: dependency('kusari') configures only kusari's
# library (no tests, benchmarks, recipes or tools), kusari installs nothing the parent did not ask
# for, and (unless BUILD is "configure-only") the parent's programs build against the static library,
# link and run: test/outside_project/main.cpp and README.md's training example (the block that calls
# optimizer.update). The compiler is COMPILER, the sanitizers SANITIZE (b_sanitize).
# Usage: subproject_test.sh SOURCE_DIR COMPILER SANITIZE [BUILD]
set -euo pipefail
source_dir=$1
compiler=$2
sanitize=$3
build=${4:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "subproject_test: $*"; exit 1; }
cp -r "$source_dir/test/subproject_parent" "$work/parent"
cp "$source_dir/test/outside_project/main.cpp" "$work/parent/"
python3 - "$source_dir/README.md" "$work/parent/readme_example.cpp" <<'PY'
import re, sys
blocks = [b for b in re.findall(r"```cpp\n(.*?)```", open(sys.argv[1]).read(), re.S) if "optimizer.update" in b]
if not blocks:
    sys.exit("README.md has no C++ block that calls optimizer.update")
open(sys.argv[2], "w").write(blocks[0])
PY
mkdir "$work/parent/subprojects"
ln -s "$(cd "$source_dir" && pwd)" "$work/parent/subprojects/kusari"
# Through ccache where it is installed (meson adds it only before a compiler it found itself): the
# subproject's library is the longest build of the suite.
launcher=""
! command -v ccache > /dev/null || launcher="ccache "
CXX="$launcher$compiler" meson setup "$work/build" "$work/parent" --wrap-mode=nodownload -Db_sanitize="$sanitize" \
  >/dev/null

targets=$(meson introspect "$work/build" --targets | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["build_by_default"]:
        print(t["name"])')
[ "$(sort <<< "$targets" | tr '\n' ' ')" = "kusari parent readme_example " ] ||
  fail "expected only kusari, parent and readme_example to build, got: $targets"
installed=$(meson introspect "$work/build" --installed | python3 -c '
import json, sys
print(" ".join(json.load(sys.stdin).values()))')
[[ "$installed" =~ ^[^\ ]*/parent$ ]] || fail "expected only the parent's program installed, got: $installed"
echo "subproject: only libkusari configured, nothing of kusari installed"
[ "$build" = configure-only ] && exit 0
ninja -C "$work/build" >/dev/null
"$work/build/parent" >/dev/null
example_output=$("$work/build/readme_example")
grep -q "step 2: loss" <<< "$example_output" || fail "the README example did not train"
! ldd "$work/build/readme_example" | grep -q libkusari || fail "readme_example links libkusari dynamically"
echo "subproject: the parent's program and README's example built against static kusari and ran"
