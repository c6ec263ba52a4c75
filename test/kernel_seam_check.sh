#!/usr/bin/env bash
# The kernel seam: outside lib/core (the array's own copies, fills and transfers) and lib/kernels (the
# routines and backends), no library, recipe, tool or benchmark source includes kernel_table.h or
# dispatches with kernel_for; they go through the ops:: routines, so a new backend plugs in below them.
# Nor does any of them take an array's memory with raw_data(), which does not check the device: code that
# reads or writes bytes itself uses host_data() (DeviceError off the host) or data<T>().
# Usage: kernel_seam_check.sh SOURCE_DIR
set -euo pipefail
cd "$1"
for dir in lib recipes tools bench; do [ -d "$dir" ] || { echo "kernel_seam_check: no $dir/ in $1"; exit 1; }; done
offenders=$(grep -rlE 'kusari/core/kernel_table\.h|kernel_for<' lib recipes tools bench \
  --include='*.h' --include='*.cpp' --include='*.cu' | grep -vE '^lib/(core|kernels)/' || true)
if [ -n "$offenders" ]; then
  echo "kernel_seam_check: these files reach the kernel table directly instead of through an ops:: routine:"
  echo "$offenders"
  exit 1
fi
unchecked=$(grep -rlE 'raw_data\(' lib recipes tools bench --include='*.h' --include='*.cpp' --include='*.cu' |
  grep -vE '^lib/(core|kernels)/' || true)
if [ -n "$unchecked" ]; then
  echo "kernel_seam_check: these files take array memory with raw_data() instead of host_data() or data<T>():"
  echo "$unchecked"
  exit 1
fi
echo "kernel_seam_check: only lib/core and lib/kernels reach the kernel table and unchecked array memory"
