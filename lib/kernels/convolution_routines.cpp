// The convolution routines of layer_routines.h: operand checks, then one kernel call.

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/detail/operand_checks.h>
#include <kusari/kernels/layer_routines.h>

namespace kusari::ops {
namespace {

using detail::require_same_device;
using detail::require_same_dtype;

// Throws unless a and b are 4-D floating arrays of one dtype and device (and bias, when defined, too).
void check_operands(const Array& a, const Array& b, const Array& bias, const char* op) {
  require_same_device(a, b, op);
  require_same_dtype(a, b, op);
  if (!is_floating(a.dtype())) throw DtypeError(cat(op, ": expected floating operands, got ", a.dtype()));
  if (a.ndim() != 4 || b.ndim() != 4) {
    throw ShapeError(cat(op, ": expected operands of 4 axes, got ", a.shape(), " and ", b.shape()));
  }
  if (bias.defined()) {
    require_same_device(a, bias, op);
    require_same_dtype(a, bias, op);
  }
}

// Throws unless `shape` has 4 axes, the batch of x and `channels` channels.
void check_result_shape(const Shape& shape, const Array& x, int64_t channels, const char* op) {
  if (shape.ndim() != 4 || shape[0] != x.shape()[0] || shape[1] != channels) {
    throw ShapeError(cat(op, ": expected a result shape (", x.shape()[0], ", ", channels, ", h, w), got ", shape));
  }
}

}  // namespace

Array convolution_2d(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& geometry,
                     const Shape& y_shape) {
  const char* op = "convolution_2d";
  check_operands(x, w, b, op);
  check_result_shape(y_shape, x, w.shape()[0], op);
  return kernel_for<kernel_ops::Conv2d>(x.device())(x, w, b, geometry, y_shape);
}

Array convolution_2d_backward_data(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& geometry,
                                   const Shape& y_shape) {
  const char* op = "convolution_2d_backward_data";
  check_operands(x, w, b, op);
  check_result_shape(y_shape, x, w.shape()[1] * geometry.groups, op);
  return kernel_for<kernel_ops::Conv2dBackwardData>(x.device())(x, w, b, geometry, y_shape);
}

Array convolution_2d_backward_filter(const Array& x, const Array& gy, const Conv2dGeometry& geometry,
                                     const Shape& w_shape) {
  const char* op = "convolution_2d_backward_filter";
  check_operands(x, gy, Array(), op);
  if (w_shape.ndim() != 4 || w_shape[0] != gy.shape()[1]) {
    throw ShapeError(cat(op, ": expected a filter shape (", gy.shape()[1], ", C/groups, kh, kw), got ", w_shape));
  }
  return kernel_for<kernel_ops::Conv2dBackwardFilter>(x.device())(x, gy, geometry, w_shape);
}

}  // namespace kusari::ops
