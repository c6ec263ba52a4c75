#!/usr/bin/env bash
# Installs the Debian packages kusari builds and tests with (only those missing); with the argument
# `sanitizers`, also clang with its sanitizer and libFuzzer runtimes and OpenMP (scripts/sanitize.sh,
# scripts/fuzz.sh). ccache is among them: meson compiles through it when it is present.
set -euo pipefail
packages=(meson ninja-build g++ pkg-config python3 python3-numpy libopenblas-openmp-dev libdnnl-dev doctest-dev zlib1g-dev
  libturbojpeg0-dev libpng-dev libcli11-dev python3-pil dataset-fashion-mnist mpich libmpich-dev
  libeigen3-dev xtensor-dev cmake ccache)
[ "${1:-}" != sanitizers ] || packages+=(clang-14 libclang-rt-14-dev libomp-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}" >/dev/null
