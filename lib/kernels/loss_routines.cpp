// The softmax cross-entropy routines of layer_routines.h: operand checks, allocation, one kernel call.

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/detail/operand_checks.h>
#include <kusari/kernels/layer_routines.h>

namespace kusari::ops {
namespace {

// Throws unless x is (N, C) floating and t is (N,) int32/int64 on x's device.
void check_classification(const Array& x, const Array& t, const char* op) {
  detail::require_same_device(x, t, op);
  if (!is_floating(x.dtype())) throw DtypeError(cat(op, ": expected floating scores, got ", x.dtype()));
  if (t.dtype() != Dtype::int32 && t.dtype() != Dtype::int64) {
    throw DtypeError(cat(op, ": expected labels of dtype int32 or int64, got ", t.dtype()));
  }
  if (x.ndim() != 2 || t.shape() != Shape{x.shape()[0]}) {
    throw ShapeError(cat(op, ": expected x of shape (N, C) and t of shape (N,), got ", x.shape(), " and ", t.shape()));
  }
}

}  // namespace

std::pair<Array, Array> softmax_cross_entropy(const Array& x, const Array& t, const CrossEntropyTargets& targets) {
  check_classification(x, t, "softmax_cross_entropy");
  Array log_p = Array::empty(x.shape(), x.dtype(), x.device());
  Array loss = Array::empty(targets.mean ? Shape{} : Shape{x.shape()[0]}, x.dtype(), x.device());
  kernel_for<kernel_ops::SoftmaxCrossEntropy>(x.device())(x, t, targets, log_p, loss);
  return {loss, log_p};
}

Array softmax_cross_entropy_grad(const Array& log_p, const Array& t, const Array& gy,
                                 const CrossEntropyTargets& targets) {
  const char* op = "softmax_cross_entropy_grad";
  check_classification(log_p, t, op);
  detail::require_same_device(log_p, gy, op);
  const Shape expected = targets.mean ? Shape{} : Shape{log_p.shape()[0]};
  if (gy.shape() != expected) {
    throw ShapeError(cat(op, ": expected the loss's gradient of shape ", expected, ", got ", gy.shape()));
  }
  if (gy.dtype() != log_p.dtype()) {
    throw DtypeError(cat(op, ": expected the loss's gradient in the scores' dtype ", log_p.dtype(), ", got ", gy.dtype()));
  }
  Array gx = Array::empty(log_p.shape(), log_p.dtype(), log_p.device());
  kernel_for<kernel_ops::SoftmaxCrossEntropyGrad>(gx.device())(log_p, t, gy, targets, gx);
  return gx;
}

}  // namespace kusari::ops
