#pragma once
// Kernel contracts applied element by element: unary and binary maps, selection, and the fused
// optimizer updates.

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

// Elementwise operations of one input. `param` is the slope, alpha or exponent where one applies.
enum class UnaryOp {
  neg, exp, log, sqrt, square, abs, sign, reciprocal, sigmoid, tanh, relu, leaky_relu, elu, pow_scalar,
  logical_not
};
// Elementwise operations of two inputs; the comparisons write bool. relu_grad(g, y) = y > 0 ? g : 0,
// add_relu(a, b) = max(a + b, 0).
enum class BinaryOp { add, sub, mul, div, pow, maximum, minimum, relu_grad, add_relu, equal, not_equal, less,
                      less_equal, greater, greater_equal };

}  // namespace kusari

namespace kusari::kernel_ops {

// out = op(x); shapes equal, dtypes equal except that logical_not writes bool.
struct KUSARI_API Unary {
  static constexpr const char* name = "unary";
  using Fn = void(UnaryOp op, double param, const Array& x, const Array& out);
};
// out = op(a, b); a and b already broadcast to out's shape and of one dtype.
struct KUSARI_API Binary {
  static constexpr const char* name = "binary";
  using Fn = void(BinaryOp op, const Array& a, const Array& b, const Array& out);
};
// out = cond ? a : b; all broadcast to out's shape.
struct KUSARI_API Where {
  static constexpr const char* name = "where";
  using Fn = void(const Array& cond, const Array& a, const Array& b, const Array& out);
};
// The momentum SGD step in one pass: v = momentum * v - lr * g, then w += v; w, v, g of one shape and
// floating dtype (g may be a broadcast view).
struct KUSARI_API MomentumStep {
  static constexpr const char* name = "momentum_step";
  using Fn = void(const Array& w, const Array& v, const Array& g, double momentum, double lr);
};
// dst = alpha * dst + beta * x in one pass; x already broadcast to dst's shape, one floating dtype.
struct KUSARI_API Axpby {
  static constexpr const char* name = "axpby";
  using Fn = void(double alpha, const Array& dst, double beta, const Array& x);
};

}  // namespace kusari::kernel_ops
