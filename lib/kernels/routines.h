#pragma once
// Device-independent array routines (no autograd): each checks its arguments, allocates the result
// and calls the kernel registered for the operands' device.

#include <optional>
#include <utility>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/core/channel_gate.h>

namespace kusari::ops {

// a + b with NumPy broadcasting (one dtype, one device).
KUSARI_API Array add(const Array& a, const Array& b);
// a - b with broadcasting.
KUSARI_API Array sub(const Array& a, const Array& b);
// a * b with broadcasting.
KUSARI_API Array mul(const Array& a, const Array& b);
// a / b with broadcasting.
KUSARI_API Array div(const Array& a, const Array& b);
// a ** b with broadcasting.
KUSARI_API Array power(const Array& a, const Array& b);
// Elementwise larger value (NaN wins), with broadcasting.
KUSARI_API Array maximum(const Array& a, const Array& b);
// Elementwise smaller value (NaN wins), with broadcasting.
KUSARI_API Array minimum(const Array& a, const Array& b);
// gy where y > 0, else 0 (the backward of relu given its output y).
KUSARI_API Array relu_grad(const Array& gy, const Array& y);
// max(a + b, 0) in one pass, NaN propagating (a residual join followed by its ReLU).
KUSARI_API Array add_relu(const Array& a, const Array& b);
// a == b as bool, with broadcasting.
KUSARI_API Array equal(const Array& a, const Array& b);
// a != b as bool, with broadcasting.
KUSARI_API Array not_equal(const Array& a, const Array& b);
// a < b as bool, with broadcasting.
KUSARI_API Array less(const Array& a, const Array& b);
// a <= b as bool, with broadcasting.
KUSARI_API Array less_equal(const Array& a, const Array& b);
// a > b as bool, with broadcasting.
KUSARI_API Array greater(const Array& a, const Array& b);
// a >= b as bool, with broadcasting.
KUSARI_API Array greater_equal(const Array& a, const Array& b);
// cond ? a : b elementwise, all three broadcast together.
KUSARI_API Array where(const Array& cond, const Array& a, const Array& b);
// dst += src in place (src broadcast to dst's shape).
KUSARI_API void add_to(const Array& dst, const Array& src);
// For scores x (N, C) of a floating dtype and integer labels t (N,): bool (N,), true where the label is
// in [0, C), its score is not NaN, and fewer than k classes score strictly higher (1 <= k <= C).
KUSARI_API Array top_k_hits(const Array& x, const Array& t, int64_t k);
// Per channel c of (N, C, ...) arrays x and y of one shape and floating dtype: {Σx, Σx·y} over every
// axis but 1, x gated, as float64 arrays of shape (C,) (channel_sums(x, x) gives Σx and Σx²).
KUSARI_API std::pair<Array, Array> channel_sums(const Array& x, const Array& y, const ChannelGate& gate = {});
// a[c]·x + b[c]·y + d[c] per channel c of (N, C, ...) arrays in x's dtype, x gated, then max(·, 0) when
// relu (NaN stays NaN), in one pass; y and b may be undefined; a, b, d have shape (C,).
KUSARI_API Array channel_affine(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                                const ChannelGate& gate = {}, bool relu = false);
// channel_sums over each of `groups` equal consecutive groups of the samples (axis 0) of x and y (and
// the gate's input): {Σx, Σx·y} as float64 arrays of shape (groups, C); the gate's scale and shift have
// shape (groups, C), row g gating group g. One pass over the operands.
KUSARI_API std::pair<Array, Array> group_channel_sums(const Array& x, const Array& y, int64_t groups,
                                                      const ChannelGate& gate = {});
// channel_affine with coefficients of shape (groups, C): row g of a, b, d (and of the gate's scale and
// shift) maps group g of `groups` equal consecutive groups of the samples (axis 0). One pass.
KUSARI_API Array group_channel_affine(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                                      int64_t groups, const ChannelGate& gate = {}, bool relu = false);
// The momentum SGD step in place, in one pass: v = momentum * v - lr * g, then w += v (w, v of one
// shape; g broadcasts to it; one floating dtype).
KUSARI_API void momentum_step(const Array& w, const Array& v, const Array& g, double momentum, double lr);
// dst = alpha * dst + beta * x in place, in one pass (x broadcasts to dst's shape; one floating dtype).
KUSARI_API void axpby(const Array& dst, double alpha, const Array& x, double beta);

// A 0-dimensional array of `value` in like's dtype and on like's device.
KUSARI_API Array scalar_like(double value, const Array& like);

// -x.
KUSARI_API Array neg(const Array& x);
// e^x (floating dtypes).
KUSARI_API Array exp(const Array& x);
// Natural logarithm (floating dtypes).
KUSARI_API Array log(const Array& x);
// Square root (floating dtypes).
KUSARI_API Array sqrt(const Array& x);
// x * x.
KUSARI_API Array square(const Array& x);
// |x|.
KUSARI_API Array abs(const Array& x);
// -1, 0 or 1 by the sign of x.
KUSARI_API Array sign(const Array& x);
// 1 / x (floating dtypes).
KUSARI_API Array reciprocal(const Array& x);
// 1 / (1 + e^-x) (floating dtypes).
KUSARI_API Array sigmoid(const Array& x);
// Hyperbolic tangent (floating dtypes).
KUSARI_API Array tanh(const Array& x);
// max(x, 0).
KUSARI_API Array relu(const Array& x);
// x for x > 0, slope * x otherwise (floating dtypes).
KUSARI_API Array leaky_relu(const Array& x, double slope);
// x for x > 0, alpha * (e^x - 1) otherwise (floating dtypes).
KUSARI_API Array elu(const Array& x, double alpha);
// x ** exponent (floating dtypes).
KUSARI_API Array power(const Array& x, double exponent);
// !x as bool.
KUSARI_API Array logical_not(const Array& x);

// Sum over `axes` (all when empty); integer and bool inputs sum to int64.
KUSARI_API Array sum(const Array& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
// Mean over `axes` (all when empty; floating dtypes).
KUSARI_API Array mean(const Array& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
// Largest element over `axes` (all when empty); throws on an empty reduction.
KUSARI_API Array amax(const Array& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
// Smallest element over `axes` (all when empty); throws on an empty reduction.
KUSARI_API Array amin(const Array& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
// Index of the largest element along `axis` (of the flattened array when absent), as int64.
KUSARI_API Array argmax(const Array& x, std::optional<int64_t> axis = {}, bool keepdims = false);
// Index of the smallest element along `axis` (of the flattened array when absent), as int64.
KUSARI_API Array argmin(const Array& x, std::optional<int64_t> axis = {}, bool keepdims = false);

// Matrix product of the last two axes with broadcast batch axes; op(a) = a^T when transpose_a.
KUSARI_API Array matmul(const Array& a, const Array& b, bool transpose_a = false, bool transpose_b = false);
// x (N, in) @ w (out, in)^T + b (out,) with b optional: the bias is written first and the product
// accumulated onto it by one GEMM (no separate pass to zero or add).
KUSARI_API Array linear(const Array& x, const Array& w, const Array& b);
// Joins arrays along an existing axis.
KUSARI_API Array concatenate(const std::vector<Array>& arrays, int64_t axis);
// Normalised, sorted, unique axes (all axes when `axes` is empty); throws naming `op` on a bad or repeated axis.
KUSARI_API std::vector<int64_t> reduction_axes(const std::vector<int64_t>& axes, int64_t ndim, const char* op);
// The shape a reduction over `axes` leaves, with unit extents kept when keepdims.
KUSARI_API Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims);

}  // namespace kusari::ops

namespace kusari {
// Elementwise arithmetic on arrays (no autograd); see kusari::ops.
KUSARI_API Array operator+(const Array& a, const Array& b);
KUSARI_API Array operator-(const Array& a, const Array& b);
KUSARI_API Array operator*(const Array& a, const Array& b);
KUSARI_API Array operator/(const Array& a, const Array& b);
KUSARI_API Array operator-(const Array& a);
KUSARI_API Array operator+(const Array& a, double b);
KUSARI_API Array operator-(const Array& a, double b);
KUSARI_API Array operator*(const Array& a, double b);
KUSARI_API Array operator/(const Array& a, double b);
KUSARI_API Array operator*(double a, const Array& b);
}  // namespace kusari
