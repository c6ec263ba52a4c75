// The per-channel routines of routines.h (batch normalization's sums and affine map): argument checks,
// then one kernel call each, on operands in channels-last order when one of them has its channels
// innermost (has_channel_rows), in row-major order otherwise.

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/normalization.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/routines.h>

namespace kusari::ops {
namespace {

// Throws unless x is a floating (N, C, ...) array and `other` (when defined) matches it.
void check_channel_operands(const Array& x, const Array& other, const char* op) {
  if (x.ndim() < 2) throw ShapeError(cat(op, ": expected an array of shape (N, C, ...), got ", x.shape()));
  if (!is_floating(x.dtype())) throw DtypeError(cat(op, ": expected a floating dtype, got ", x.dtype()));
  if (!other.defined()) return;
  if (other.shape() != x.shape() || other.dtype() != x.dtype() || other.device() != x.device()) {
    throw ShapeError(cat(op, ": expected a second operand of shape ", x.shape(), " and dtype ", x.dtype(), " on ",
                         x.device(), ", got ", other.shape(), " and ", other.dtype(), " on ", other.device()));
  }
}

// A per-channel coefficient as a contiguous float64 (C,) array on x's device.
Array coefficient(const Array& c, const Array& x, const char* op) {
  if (c.shape() != Shape{x.shape()[1]}) {
    throw ShapeError(cat(op, ": expected per-channel coefficients of shape (", x.shape()[1], ",), got ", c.shape()));
  }
  return c.to(x.device()).astype(Dtype::float64).contiguous();
}

// The memory order the kernels get the operands in: channels-last when any of them (of more than 2
// axes) has channel rows, so that a channels-last gradient or input is never copied; row-major otherwise.
MemoryOrder kernel_order(const Array& x, const Array& y, const ChannelGate& gate) {
  if (x.ndim() <= 2) return MemoryOrder::row_major;
  for (const Array* a : {&x, &y, &gate.input}) {
    if (a->defined() && has_channel_rows(*a)) return MemoryOrder::channels_last;
  }
  return MemoryOrder::row_major;
}

// An operand in the kernels' order (undefined stays undefined).
Array arranged(const Array& a, MemoryOrder order) { return a.defined() ? in_order(a, order) : a; }

// The gate with its input in the kernels' order and its coefficients float64 (undefined stays undefined).
ChannelGate prepared(const ChannelGate& gate, const Array& x, MemoryOrder order, const char* op) {
  if (!gate.input.defined()) return {};
  check_channel_operands(x, gate.input, op);
  return {arranged(gate.input, order), coefficient(gate.scale, x, op), coefficient(gate.shift, x, op)};
}

// Per-group coefficients of shape (groups, C) as a contiguous float64 array on x's device.
Array group_coefficient(const Array& c, const Array& x, int64_t groups, const char* op) {
  if (c.shape() != Shape{groups, x.shape()[1]}) {
    throw ShapeError(cat(op, ": expected per-group coefficients of shape (", groups, ", ", x.shape()[1], "), got ",
                         c.shape()));
  }
  return c.to(x.device()).astype(Dtype::float64).contiguous();
}

// Throws unless `groups` splits x's samples (axis 0) into equal groups.
void check_groups(const Array& x, int64_t groups, const char* op) {
  if (groups < 1 || x.shape()[0] % groups != 0) {
    throw ShapeError(cat(op, ": expected a group count >= 1 that divides the ", x.shape()[0], " samples, got ",
                         groups));
  }
}

// The gate with its input in the kernels' order and per-group float64 coefficients.
ChannelGate prepared_groups(const ChannelGate& gate, const Array& x, int64_t groups, MemoryOrder order,
                            const char* op) {
  if (!gate.input.defined()) return {};
  check_channel_operands(x, gate.input, op);
  return {arranged(gate.input, order), group_coefficient(gate.scale, x, groups, op),
          group_coefficient(gate.shift, x, groups, op)};
}

}  // namespace

std::pair<Array, Array> group_channel_sums(const Array& x, const Array& y, int64_t groups, const ChannelGate& gate) {
  const char* op = "group_channel_sums";
  check_channel_operands(x, y, op);
  check_groups(x, groups, op);
  const Array sums = Array::empty(Shape{groups, x.shape()[1]}, Dtype::float64, x.device());
  const Array products = Array::empty(sums.shape(), Dtype::float64, x.device());
  const MemoryOrder order = kernel_order(x, y, gate);
  kernel_for<kernel_ops::ChannelSums>(x.device())(arranged(x, order), arranged(y, order),
                                                    prepared_groups(gate, x, groups, order, op), groups, sums,
                                                    products);
  return {sums, products};
}

Array group_channel_affine(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                           int64_t groups, const ChannelGate& gate, bool relu) {
  const char* op = "group_channel_affine";
  check_channel_operands(x, y, op);
  check_groups(x, groups, op);
  const MemoryOrder order = kernel_order(x, y, gate);
  const Array out = empty_in_order(x.shape(), order, x.dtype(), x.device());
  kernel_for<kernel_ops::ChannelAffine>(x.device())(
      arranged(x, order), group_coefficient(a, x, groups, op), arranged(y, order),
      y.defined() ? group_coefficient(b, x, groups, op) : Array(), group_coefficient(d, x, groups, op),
      prepared_groups(gate, x, groups, order, op), relu, groups, out);
  return out;
}

std::pair<Array, Array> channel_sums(const Array& x, const Array& y, const ChannelGate& gate) {
  const char* op = "channel_sums";
  check_channel_operands(x, y, op);
  const Array sums = Array::empty(Shape{x.shape()[1]}, Dtype::float64, x.device());
  const Array products = Array::empty(sums.shape(), Dtype::float64, x.device());
  const MemoryOrder order = kernel_order(x, y, gate);
  kernel_for<kernel_ops::ChannelSums>(x.device())(arranged(x, order), arranged(y, order), prepared(gate, x, order, op),
                                                    1, sums, products);
  return {sums, products};
}

Array channel_affine(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                     const ChannelGate& gate, bool relu) {
  const char* op = "channel_affine";
  check_channel_operands(x, y, op);
  const MemoryOrder order = kernel_order(x, y, gate);
  const Array out = empty_in_order(x.shape(), order, x.dtype(), x.device());
  kernel_for<kernel_ops::ChannelAffine>(x.device())(arranged(x, order), coefficient(a, x, op), arranged(y, order),
                                                      y.defined() ? coefficient(b, x, op) : Array(),
                                                      coefficient(d, x, op), prepared(gate, x, order, op), relu, 1, out);
  return out;
}

}  // namespace kusari::ops
