#pragma once
// The dispatch seam between device-independent code and device kernels: one table per operation,
// indexed by device type, filled by each backend at load time (lib/kernels/cpu, later cuda).

#include <array>
#include <cstdint>
#include <vector>

#include <kusari/core/array.h>

namespace kusari {

// Elementwise operations of one input. `param` is the slope, alpha or exponent where one applies.
enum class UnaryOp {
  neg, exp, log, sqrt, square, abs, sign, reciprocal, sigmoid, tanh, relu, leaky_relu, elu, pow_scalar,
  logical_not
};
// Elementwise operations of two inputs; the comparisons write bool.
enum class BinaryOp { add, sub, mul, div, pow, maximum, minimum, equal, not_equal, less, less_equal, greater,
                      greater_equal };
// Reductions over a set of axes; arg* reduce over exactly one axis and write int64.
enum class ReduceOp { sum, max, min, argmax, argmin };
// Distributions the random kernel draws from.
enum class Distribution { uniform, normal, bernoulli };

namespace kernel_ops {
// dst[...] = src[...] converted to dst's dtype; shapes equal (src may be a broadcast view).
struct Copy {
  static constexpr const char* name = "copy";
  using Fn = void(const Array& src, const Array& dst);
};
// dst[...] = value.
struct Fill {
  static constexpr const char* name = "fill";
  using Fn = void(const Array& dst, double value);
};
// out = op(x); shapes equal, dtypes equal except that logical_not writes bool.
struct Unary {
  static constexpr const char* name = "unary";
  using Fn = void(UnaryOp op, double param, const Array& x, const Array& out);
};
// out = op(a, b); a and b already broadcast to out's shape and of one dtype.
struct Binary {
  static constexpr const char* name = "binary";
  using Fn = void(BinaryOp op, const Array& a, const Array& b, const Array& out);
};
// out = cond ? a : b; all broadcast to out's shape.
struct Where {
  static constexpr const char* name = "where";
  using Fn = void(const Array& cond, const Array& a, const Array& b, const Array& out);
};
// out = reduction of x over `axes` (sorted, unique); out has x's shape without those axes.
struct Reduce {
  static constexpr const char* name = "reduce";
  using Fn = void(ReduceOp op, const Array& x, const std::vector<int64_t>& axes, const Array& out);
};
// out = alpha * op(a) @ op(b) + beta * out for 2-D arrays, op transposing when asked.
struct Gemm {
  static constexpr const char* name = "gemm";
  using Fn = void(const Array& a, bool transpose_a, const Array& b, bool transpose_b, double alpha, double beta,
                  const Array& out);
};
// out[i] = draw number `offset + i` of the stream `seed` (p0, p1: low/high, mean/stddev or p/unused).
struct Random {
  static constexpr const char* name = "random";
  using Fn = void(Distribution distribution, uint64_t seed, uint64_t offset, double p0, double p1, const Array& out);
};
// Copies between host memory and this device type (contiguous arrays of one dtype and shape).
struct Transfer {
  static constexpr const char* name = "transfer";
  using Fn = void(const Array& src, const Array& dst);
};
}  // namespace kernel_ops

// The table of one operation's kernels, one per device type.
template <class Op>
struct KernelTable {
  static inline std::array<typename Op::Fn*, kDeviceTypeCount> entries{};
};

// Installs `fn` as Op's kernel for `type`.
template <class Op>
void register_kernel(DeviceType type, typename Op::Fn* fn) {
  KernelTable<Op>::entries[static_cast<size_t>(type)] = fn;
}

// Op's kernel for `device`; throws DeviceError when that backend has none.
template <class Op>
typename Op::Fn* kernel_for(const Device& device) {
  auto* fn = KernelTable<Op>::entries[static_cast<size_t>(device.type)];
  if (!fn) throw DeviceError(cat(Op::name, ": no kernel is registered for device ", device));
  return fn;
}

}  // namespace kusari
