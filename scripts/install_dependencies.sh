#!/usr/bin/env bash
# Installs the Debian packages kusari builds and tests with (only those missing); with the argument
# `sanitizers`, also clang with its sanitizer and libFuzzer runtimes and OpenMP (scripts/sanitize.sh,
# scripts/fuzz.sh); with `openmpi`, Open MPI beside MPICH (scripts/openmpi_check.sh), leaving mpiexec,
# mpicc and the generic MPI headers MPICH's as before. ccache is among them: meson compiles through it
# when it is present.
set -euo pipefail
packages=(meson ninja-build g++ pkg-config python3 python3-numpy libopenblas-openmp-dev libdnnl-dev doctest-dev zlib1g-dev
  libturbojpeg0-dev libpng-dev libcli11-dev python3-pil dataset-fashion-mnist mpich libmpich-dev
  libeigen3-dev xtensor-dev cmake ccache)
for extra in "$@"; do
  case $extra in
    sanitizers) packages+=(clang-14 libclang-rt-14-dev libomp-14-dev) ;;
    openmpi) packages+=(libopenmpi-dev openmpi-bin iproute2 util-linux) ;;  # and the hosts of scripts/hosts.sh
    *) echo "install_dependencies.sh: expected sanitizers or openmpi, got '$extra'" >&2; exit 2 ;;
  esac
done
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
# Open MPI's alternatives outrank MPICH's: keep the launcher and headers MPICH's, as the default build's.
if [[ " ${missing[*]} " == *" libopenmpi-dev "* ]] && [ -x /usr/bin/mpirun.mpich ]; then
  $sudo update-alternatives --set mpirun /usr/bin/mpirun.mpich >/dev/null
  $sudo update-alternatives --set mpi /usr/bin/mpicc.mpich >/dev/null
  $sudo update-alternatives --set "mpi-$(gcc -print-multiarch)" "/usr/include/$(gcc -print-multiarch)/mpich" >/dev/null
fi
