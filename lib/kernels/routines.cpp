#include <kusari/kernels/routines.h>

#include <algorithm>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/elementwise.h>
#include <kusari/kernels/ops/linalg.h>
#include <kusari/kernels/ops/reduction.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/detail/operand_checks.h>

namespace kusari::ops {
namespace {

using detail::require_same_device;
using detail::require_same_dtype;

const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::add: return "add";
    case BinaryOp::sub: return "sub";
    case BinaryOp::mul: return "mul";
    case BinaryOp::div: return "div";
    case BinaryOp::pow: return "power";
    case BinaryOp::maximum: return "maximum";
    case BinaryOp::minimum: return "minimum";
    case BinaryOp::relu_grad: return "relu_grad";
    case BinaryOp::add_relu: return "add_relu";
    case BinaryOp::equal: return "equal";
    case BinaryOp::not_equal: return "not_equal";
    case BinaryOp::less: return "less";
    case BinaryOp::less_equal: return "less_equal";
    case BinaryOp::greater: return "greater";
    case BinaryOp::greater_equal: return "greater_equal";
  }
  return "binary";
}

// An uninitialised result of `shape` in the memory order of the first operand of that shape that is
// dense in one (row-major or channels-last; a broadcast or strided view is neither), so that
// elementwise chains over channels-last arrays stay channels-last.
Array empty_result(const Shape& shape, Dtype dtype, const Device& device,
                   std::initializer_list<const Array*> operands) {
  for (const Array* a : operands) {
    if (a->shape() != shape) continue;
    const MemoryOrder order = memory_order_of(*a);
    if (order == MemoryOrder::channels_last || a->is_contiguous()) return empty_in_order(shape, order, dtype, device);
  }
  return Array::empty(shape, dtype, device);
}

Array binary(BinaryOp op, const Array& a, const Array& b) {
  const char* name = binary_name(op);
  require_same_device(a, b, name);
  require_same_dtype(a, b, name);
  const bool comparison = op >= BinaryOp::equal;
  if (a.dtype() == Dtype::bool_ && !comparison && op != BinaryOp::maximum && op != BinaryOp::minimum) {
    throw DtypeError(cat(name, ": expected a numeric dtype, got bool"));
  }
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Array out = empty_result(shape, comparison ? Dtype::bool_ : a.dtype(), a.device(), {&a, &b});
  kernel_for<kernel_ops::Binary>(a.device())(op, a.broadcast_to(shape), b.broadcast_to(shape), out);
  return out;
}

Array unary(UnaryOp op, const char* name, const Array& x, double param = 0, bool floating_only = true) {
  if (!x.defined()) throw ValueError(cat(name, ": the operand is undefined"));
  if (floating_only && !is_floating(x.dtype())) {
    throw DtypeError(cat(name, ": expected a floating dtype, got ", x.dtype()));
  }
  if (!floating_only && x.dtype() == Dtype::bool_ && op != UnaryOp::logical_not) {
    throw DtypeError(cat(name, ": expected a numeric dtype, got bool"));
  }
  Array out = empty_result(x.shape(), op == UnaryOp::logical_not ? Dtype::bool_ : x.dtype(), x.device(), {&x});
  kernel_for<kernel_ops::Unary>(x.device())(op, param, x, out);
  return out;
}

Array reduce(ReduceOp op, const char* name, const Array& x, const std::vector<int64_t>& axes, bool keepdims,
             Dtype out_dtype) {
  if (!x.defined()) throw ValueError(cat(name, ": the operand is undefined"));
  const std::vector<int64_t> normalized = reduction_axes(axes, x.ndim(), name);
  const Shape dropped = reduced_shape(x.shape(), normalized, false);
  if (op != ReduceOp::sum) {
    for (int64_t axis : normalized) {
      if (x.shape()[axis] == 0) {
        throw ShapeError(cat(name, ": zero-size reduction over axis ", axis, " of shape ", x.shape()));
      }
    }
  }
  Array source = x.dtype() == Dtype::bool_ ? x.astype(Dtype::int64) : x;
  Array out = Array::empty(dropped, out_dtype, x.device());
  kernel_for<kernel_ops::Reduce>(x.device())(op, source, normalized, out);
  return keepdims ? out.reshape(reduced_shape(x.shape(), normalized, true)) : out;
}

Dtype sum_dtype(Dtype dtype) { return is_floating(dtype) ? dtype : Dtype::int64; }

Array arg_reduce(ReduceOp op, const char* name, const Array& x, std::optional<int64_t> axis, bool keepdims) {
  if (!axis) {
    if (x.size() == 0) throw ShapeError(cat(name, ": attempt to take the ", name, " of an empty array"));
    Array flat = reduce(op, name, x.reshape(Shape{x.size()}), {0}, false, Dtype::int64);
    return keepdims ? flat.reshape(Shape(std::vector<int64_t>(static_cast<size_t>(x.ndim()), 1))) : flat;
  }
  return reduce(op, name, x, {*axis}, keepdims, Dtype::int64);
}

}  // namespace

std::vector<int64_t> reduction_axes(const std::vector<int64_t>& axes, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (int64_t i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : axes) out.push_back(normalize_axis(a, ndim, op));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    throw IndexError(cat(op, ": expected distinct axes, got a repeated one"));
  }
  return out;
}

Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims) {
  Shape dims;
  for (int64_t i = 0; i < shape.ndim(); ++i) {
    const bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!reduced) {
      dims.push_back(shape[i]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  return dims;
}

Array add(const Array& a, const Array& b) { return binary(BinaryOp::add, a, b); }
Array sub(const Array& a, const Array& b) { return binary(BinaryOp::sub, a, b); }
Array mul(const Array& a, const Array& b) { return binary(BinaryOp::mul, a, b); }
Array div(const Array& a, const Array& b) { return binary(BinaryOp::div, a, b); }
Array power(const Array& a, const Array& b) { return binary(BinaryOp::pow, a, b); }
Array maximum(const Array& a, const Array& b) { return binary(BinaryOp::maximum, a, b); }
Array minimum(const Array& a, const Array& b) { return binary(BinaryOp::minimum, a, b); }
Array relu_grad(const Array& gy, const Array& y) { return binary(BinaryOp::relu_grad, gy, y); }
Array add_relu(const Array& a, const Array& b) { return binary(BinaryOp::add_relu, a, b); }
Array equal(const Array& a, const Array& b) { return binary(BinaryOp::equal, a, b); }
Array not_equal(const Array& a, const Array& b) { return binary(BinaryOp::not_equal, a, b); }
Array less(const Array& a, const Array& b) { return binary(BinaryOp::less, a, b); }
Array less_equal(const Array& a, const Array& b) { return binary(BinaryOp::less_equal, a, b); }
Array greater(const Array& a, const Array& b) { return binary(BinaryOp::greater, a, b); }
Array greater_equal(const Array& a, const Array& b) { return binary(BinaryOp::greater_equal, a, b); }

Array where(const Array& cond, const Array& a, const Array& b) {
  require_same_device(a, b, "where");
  require_same_device(cond, a, "where");
  if (cond.dtype() != Dtype::bool_) throw DtypeError(cat("where: expected a bool condition, got ", cond.dtype()));
  require_same_dtype(a, b, "where");
  const Shape shape = broadcast_shapes(cond.shape(), broadcast_shapes(a.shape(), b.shape(), "where"), "where");
  Array out = empty_result(shape, a.dtype(), a.device(), {&a, &b, &cond});
  kernel_for<kernel_ops::Where>(a.device())(cond.broadcast_to(shape), a.broadcast_to(shape), b.broadcast_to(shape),
                                            out);
  return out;
}

void add_to(const Array& dst, const Array& src) {
  require_same_device(dst, src, "add_to");
  if (dst.dtype() != src.dtype()) {
    throw DtypeError(cat("add_to: expected a source of dtype ", dst.dtype(), ", got ", src.dtype()));
  }
  kernel_for<kernel_ops::Binary>(dst.device())(BinaryOp::add, dst, src.broadcast_to(dst.shape()), dst);
}

void axpby(const Array& dst, double alpha, const Array& x, double beta) {
  require_same_device(dst, x, "axpby");
  if (dst.dtype() != x.dtype()) {
    throw DtypeError(cat("axpby: expected x of dtype ", dst.dtype(), ", got ", x.dtype()));
  }
  kernel_for<kernel_ops::Axpby>(dst.device())(alpha, dst, beta, x.broadcast_to(dst.shape()));
}

void momentum_step(const Array& w, const Array& v, const Array& g, double momentum, double lr) {
  require_same_device(w, v, "momentum_step");
  require_same_device(w, g, "momentum_step");
  if (v.shape() != w.shape()) {
    throw ShapeError(cat("momentum_step: expected a velocity of shape ", w.shape(), ", got ", v.shape()));
  }
  if (v.dtype() != w.dtype() || g.dtype() != w.dtype()) {
    throw DtypeError(cat("momentum_step: expected velocity and gradient of dtype ", w.dtype(), ", got ", v.dtype(),
                         " and ", g.dtype()));
  }
  kernel_for<kernel_ops::MomentumStep>(w.device())(w, v, g.broadcast_to(w.shape()), momentum, lr);
}

Array scalar_like(double value, const Array& like) { return Array::scalar(value, like.dtype(), like.device()); }

Array neg(const Array& x) { return unary(UnaryOp::neg, "neg", x, 0, false); }
Array exp(const Array& x) { return unary(UnaryOp::exp, "exp", x); }
Array log(const Array& x) { return unary(UnaryOp::log, "log", x); }
Array sqrt(const Array& x) { return unary(UnaryOp::sqrt, "sqrt", x); }
Array square(const Array& x) { return unary(UnaryOp::square, "square", x, 0, false); }
Array abs(const Array& x) { return unary(UnaryOp::abs, "abs", x, 0, false); }
Array sign(const Array& x) { return unary(UnaryOp::sign, "sign", x, 0, false); }
Array reciprocal(const Array& x) { return unary(UnaryOp::reciprocal, "reciprocal", x); }
Array sigmoid(const Array& x) { return unary(UnaryOp::sigmoid, "sigmoid", x); }
Array tanh(const Array& x) { return unary(UnaryOp::tanh, "tanh", x); }
Array relu(const Array& x) { return unary(UnaryOp::relu, "relu", x, 0, false); }
Array leaky_relu(const Array& x, double slope) { return unary(UnaryOp::leaky_relu, "leaky_relu", x, slope); }
Array elu(const Array& x, double alpha) { return unary(UnaryOp::elu, "elu", x, alpha); }
Array power(const Array& x, double exponent) { return unary(UnaryOp::pow_scalar, "power", x, exponent); }
Array logical_not(const Array& x) { return unary(UnaryOp::logical_not, "logical_not", x, 0, false); }

Array sum(const Array& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce(ReduceOp::sum, "sum", x, axes, keepdims, sum_dtype(x.dtype()));
}

Array mean(const Array& x, const std::vector<int64_t>& axes, bool keepdims) {
  if (!is_floating(x.dtype())) throw DtypeError(cat("mean: expected a floating dtype, got ", x.dtype()));
  const Array total = sum(x, axes, keepdims);
  const int64_t count = total.size() == 0 ? 0 : x.size() / std::max<int64_t>(1, total.size());
  return div(total, scalar_like(static_cast<double>(count), total));
}

Array amax(const Array& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce(ReduceOp::max, "amax", x, axes, keepdims, x.dtype() == Dtype::bool_ ? Dtype::int64 : x.dtype());
}

Array amin(const Array& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce(ReduceOp::min, "amin", x, axes, keepdims, x.dtype() == Dtype::bool_ ? Dtype::int64 : x.dtype());
}

Array argmax(const Array& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduce(ReduceOp::argmax, "argmax", x, axis, keepdims);
}

Array argmin(const Array& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduce(ReduceOp::argmin, "argmin", x, axis, keepdims);
}

Array linear(const Array& x, const Array& w, const Array& b) {
  if (!b.defined()) return matmul(x, w, false, true);
  require_same_device(x, b, "linear");
  if (x.ndim() != 2 || w.ndim() != 2 || b.ndim() != 1 || x.shape()[1] != w.shape()[1] || b.shape()[0] != w.shape()[0]) {
    throw ShapeError(cat("linear: expected x (N, in), w (out, in) and b (out,), got shapes ", x.shape(), ", ", w.shape(),
                         " and ", b.shape()));
  }
  if (x.dtype() != w.dtype() || x.dtype() != b.dtype() || !is_floating(x.dtype())) {
    throw DtypeError(cat("linear: expected operands of one floating dtype, got ", x.dtype(), ", ", w.dtype(), " and ",
                         b.dtype()));
  }
  require_same_device(x, w, "linear");
  Array out = Array::empty(Shape{x.shape()[0], w.shape()[0]}, x.dtype(), x.device());
  out.assign(b);
  kernel_for<kernel_ops::Gemm>(x.device())(x, false, w, true, 1.0, 1.0, out);
  return out;
}

Array matmul(const Array& a, const Array& b, bool transpose_a, bool transpose_b) {
  require_same_device(a, b, "matmul");
  require_same_dtype(a, b, "matmul");
  if (!is_floating(a.dtype())) throw DtypeError(cat("matmul: expected a floating dtype, got ", a.dtype()));
  if (a.ndim() < 2 || b.ndim() < 2) {
    throw ShapeError(cat("matmul: expected operands with at least 2 axes, got shapes ", a.shape(), " and ",
                         b.shape()));
  }
  const int64_t m = transpose_a ? a.shape()[a.ndim() - 1] : a.shape()[a.ndim() - 2];
  const int64_t ka = transpose_a ? a.shape()[a.ndim() - 2] : a.shape()[a.ndim() - 1];
  const int64_t kb = transpose_b ? b.shape()[b.ndim() - 1] : b.shape()[b.ndim() - 2];
  const int64_t n = transpose_b ? b.shape()[b.ndim() - 2] : b.shape()[b.ndim() - 1];
  if (ka != kb) {
    throw ShapeError(cat("matmul: inner dimensions differ (", ka, " vs ", kb, ") for shapes ", a.shape(), " and ",
                         b.shape(), transpose_a ? " (a transposed)" : "", transpose_b ? " (b transposed)" : ""));
  }
  auto gemm = kernel_for<kernel_ops::Gemm>(a.device());
  if (a.ndim() == 2 && b.ndim() == 2) {
    Array out = Array::empty(Shape{m, n}, a.dtype(), a.device());
    gemm(a, transpose_a, b, transpose_b, 1.0, 0.0, out);
    return out;
  }
  const Shape batch_a(a.shape().begin(), a.shape().end() - 2);
  const Shape batch_b(b.shape().begin(), b.shape().end() - 2);
  const Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Array out = Array::empty(out_shape, a.dtype(), a.device());
  auto with_batch = [&](const Array& x) {
    Shape dims = batch;
    dims.push_back(x.shape()[x.ndim() - 2]);
    dims.push_back(x.shape()[x.ndim() - 1]);
    return x.broadcast_to(dims);
  };
  const Array ab = with_batch(a), bb = with_batch(b);
  const int64_t count = batch.numel();
  const int64_t nb = batch.ndim();
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset_a = ab.offset(), offset_b = bb.offset(), offset_o = out.offset();
    for (int64_t d = nb - 1; d >= 0; --d) {
      const int64_t index = rest % batch[d];
      rest /= batch[d];
      offset_a += index * ab.strides()[static_cast<size_t>(d)];
      offset_b += index * bb.strides()[static_cast<size_t>(d)];
      offset_o += index * out.strides()[static_cast<size_t>(d)];
    }
    auto matrix = [nb](const Array& x, int64_t offset) {
      return x.as_strided(Shape{x.shape()[nb], x.shape()[nb + 1]},
                          {x.strides()[static_cast<size_t>(nb)], x.strides()[static_cast<size_t>(nb + 1)]}, offset);
    };
    gemm(matrix(ab, offset_a), transpose_a, matrix(bb, offset_b), transpose_b, 1.0, 0.0, matrix(out, offset_o));
  }
  return out;
}

Array concatenate(const std::vector<Array>& arrays, int64_t axis) {
  if (arrays.empty()) throw ValueError("concatenate: expected at least one array, got none");
  const Array& first = arrays[0];
  axis = normalize_axis(axis, first.ndim(), "concatenate");
  int64_t total = 0;
  for (const Array& x : arrays) {
    require_same_device(first, x, "concatenate");
    if (x.dtype() != first.dtype()) {
      throw DtypeError(cat("concatenate: expected arrays of one dtype, got ", first.dtype(), " and ", x.dtype()));
    }
    bool fits = x.ndim() == first.ndim();
    for (int64_t d = 0; fits && d < x.ndim(); ++d) fits = d == axis || x.shape()[d] == first.shape()[d];
    if (!fits) {
      throw ShapeError(cat("concatenate: expected arrays matching shape ", first.shape(), " except on axis ", axis,
                           ", got ", x.shape()));
    }
    total += x.shape()[axis];
  }
  Shape shape = first.shape();
  shape[axis] = total;
  Array out = Array::empty(shape, first.dtype(), first.device());
  int64_t start = 0;
  for (const Array& x : arrays) {
    std::vector<Index> index(static_cast<size_t>(axis), Slice{});
    index.push_back(Slice{start, start + x.shape()[axis]});
    out.get_item(index).assign(x);
    start += x.shape()[axis];
  }
  return out;
}

}  // namespace kusari::ops

namespace kusari {
Array operator+(const Array& a, const Array& b) { return ops::add(a, b); }
Array operator-(const Array& a, const Array& b) { return ops::sub(a, b); }
Array operator*(const Array& a, const Array& b) { return ops::mul(a, b); }
Array operator/(const Array& a, const Array& b) { return ops::div(a, b); }
Array operator-(const Array& a) { return ops::neg(a); }
Array operator+(const Array& a, double b) { return ops::add(a, ops::scalar_like(b, a)); }
Array operator-(const Array& a, double b) { return ops::sub(a, ops::scalar_like(b, a)); }
Array operator*(const Array& a, double b) { return ops::mul(a, ops::scalar_like(b, a)); }
Array operator/(const Array& a, double b) { return ops::div(a, ops::scalar_like(b, a)); }
Array operator*(double a, const Array& b) { return ops::mul(ops::scalar_like(a, b), b); }
}  // namespace kusari
