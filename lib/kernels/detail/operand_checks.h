#pragma once
// Internal to the routines: the checks every routine makes of its operands before dispatching.

#include <kusari/core/array.h>
#include <kusari/core/error.h>

namespace kusari::ops::detail {

// Throws ValueError when an operand is undefined, DeviceError naming both devices when they differ.
inline void require_same_device(const Array& a, const Array& b, const char* op) {
  if (!a.defined() || !b.defined()) throw ValueError(cat(op, ": an operand is undefined"));
  if (!(a.device() == b.device())) {
    throw DeviceError(cat(op, ": expected operands on one device, got ", a.device(), " and ", b.device()));
  }
}

// Throws DtypeError naming both dtypes when they differ.
inline void require_same_dtype(const Array& a, const Array& b, const char* op) {
  if (a.dtype() != b.dtype()) {
    throw DtypeError(cat(op, ": expected operands of one dtype, got ", a.dtype(), " and ", b.dtype()));
  }
}

}  // namespace kusari::ops::detail
