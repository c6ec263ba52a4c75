#include <kusari/functions/function_helpers.h>

#include <kusari/kernels/routines.h>

namespace kusari::functions {

Variable scalar_constant(double value, const Variable& like) {
  return Variable(Array::scalar(value, like.dtype(), like.device()), false);
}

void require_same_dtype_and_device(const Variable& a, const Variable& b, const char* op) {
  if (!a.defined() || !b.defined()) throw ValueError(cat(op, ": an operand is undefined"));
  if (a.dtype() != b.dtype()) {
    throw DtypeError(cat(op, ": expected operands of one dtype, got ", a.dtype(), " and ", b.dtype()));
  }
  if (!(a.device() == b.device())) {
    throw DeviceError(cat(op, ": expected operands on one device, got ", a.device(), " and ", b.device()));
  }
}

void require_floating(const Variable& x, const char* op) {
  if (!x.defined()) throw ValueError(cat(op, ": the operand is undefined"));
  if (!is_floating(x.dtype())) throw DtypeError(cat(op, ": expected a floating dtype, got ", x.dtype()));
}

Variable select_constant(const Array& cond, double if_true, double if_false, const Array& like) {
  return Variable(ops::where(cond, ops::scalar_like(if_true, like), ops::scalar_like(if_false, like)), false);
}

}  // namespace kusari::functions
