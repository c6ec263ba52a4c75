// The pooling routines of layer_routines.h: operand checks, then one kernel call.

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/layer_routines.h>

namespace kusari::ops {
namespace {

// Throws unless a is a 4-D floating array and `shape` has its batch and channels.
void check_planes(const Array& a, const Shape& shape, const char* op) {
  if (!a.defined()) throw ValueError(cat(op, ": the operand is undefined"));
  if (!is_floating(a.dtype())) throw DtypeError(cat(op, ": expected a floating operand, got ", a.dtype()));
  if (a.ndim() != 4 || shape.ndim() != 4 || shape[0] != a.shape()[0] || shape[1] != a.shape()[1]) {
    throw ShapeError(cat(op, ": expected an operand and a result shape (N, C, h, w) of one N and C, got ", a.shape(),
                         " and ", shape));
  }
}

}  // namespace

MaxPool2dResult max_pooling_2d(const Array& x, const Pool2dGeometry& geometry, const Shape& y_shape) {
  check_planes(x, y_shape, "max_pooling_2d");
  return kernel_for<kernel_ops::MaxPool2d>(x.device())(x, geometry, y_shape);
}

Array max_pooling_2d_scatter(const Array& gy, const KernelState& winners, const Shape& x_shape) {
  check_planes(gy, x_shape, "max_pooling_2d_scatter");
  return kernel_for<kernel_ops::MaxPool2dScatter>(gy.device())(gy, winners, x_shape);
}

Array max_pooling_2d_gather(const Array& x, const KernelState& winners) {
  check_planes(x, x.shape(), "max_pooling_2d_gather");
  return kernel_for<kernel_ops::MaxPool2dGather>(x.device())(x, winners);
}

Array average_pooling_2d(const Array& x, const Pool2dGeometry& geometry, const Shape& y_shape) {
  check_planes(x, y_shape, "average_pooling_2d");
  return kernel_for<kernel_ops::AveragePool2d>(x.device())(x, geometry, y_shape);
}

Array average_pooling_2d_backward(const Array& gy, const Pool2dGeometry& geometry, const Shape& x_shape) {
  check_planes(gy, x_shape, "average_pooling_2d_backward");
  return kernel_for<kernel_ops::AveragePool2dBackward>(gy.device())(gy, geometry, x_shape);
}

}  // namespace kusari::ops
