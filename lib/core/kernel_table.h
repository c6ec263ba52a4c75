#pragma once
// The dispatch seam between device-independent code and device kernels: one table per operation,
// indexed by device type, filled by each backend on the first dispatch (lib/kernels/cpu, later cuda).

#include <array>
#include <atomic>
#include <mutex>
#include <cstdint>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/core/channel_gate.h>

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
// Reductions over a set of axes; arg* reduce over exactly one axis and write int64.
enum class ReduceOp { sum, max, min, argmax, argmin };
// Distributions the random kernel draws from.
enum class Distribution { uniform, normal, bernoulli };

// Strides, padding, dilation and groups of a 2-D convolution over NCHW arrays (the kernel and output
// extents are read from the arrays' shapes).
struct KUSARI_API Conv2dGeometry {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
};
// Window, strides and padding of a 2-D pooling over NCHW arrays (output extents come from the output's shape).
struct KUSARI_API Pool2dGeometry {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
};

// How softmax cross-entropy turns labels into targets: a sample labelled ignore_label counts for nothing;
// any other sample's target is (1 - label_smoothing) one_hot(label) + label_smoothing / C.
struct KUSARI_API CrossEntropyTargets {
  int64_t ignore_label = -1;
  double label_smoothing = 0;
  bool mean = true;  // the loss is the mean over counted samples (their sum over max(count, 1)), else per sample
};

namespace kernel_ops {
// dst[...] = src[...] converted to dst's dtype; shapes equal (src may be a broadcast view).
struct KUSARI_API Copy {
  static constexpr const char* name = "copy";
  using Fn = void(const Array& src, const Array& dst);
};
// dst[...] = value.
struct KUSARI_API Fill {
  static constexpr const char* name = "fill";
  using Fn = void(const Array& dst, double value);
};
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
// Per channel c of (N, C, ...) arrays x and y of one shape, floating dtype and memory order (row-major,
// or with channel rows: has_channel_rows in core/memory_order.h; the gate's input too):
// sums[c] = Σ x and products[c] = Σ x·y over every axis but 1, x gated, accumulated into float64 (C,).
struct KUSARI_API ChannelSums {
  static constexpr const char* name = "channel_sums";
  using Fn = void(const Array& x, const Array& y, const ChannelGate& gate, const Array& sums, const Array& products);
};
// out = a[c]·x + b[c]·y + d[c] per channel c of (N, C, ...) arrays of one dtype and memory order (as for
// ChannelSums; out too), x gated (y may be undefined, then b is too), then max(out, 0) when relu (NaN
// stays); a, b, d float64 (C,).
struct KUSARI_API ChannelAffine {
  static constexpr const char* name = "channel_affine";
  using Fn = void(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                  const ChannelGate& gate, bool relu, const Array& out);
};
// out = cond ? a : b; all broadcast to out's shape.
struct KUSARI_API Where {
  static constexpr const char* name = "where";
  using Fn = void(const Array& cond, const Array& a, const Array& b, const Array& out);
};
// out = reduction of x over `axes` (sorted, unique); out has x's shape without those axes.
struct KUSARI_API Reduce {
  static constexpr const char* name = "reduce";
  using Fn = void(ReduceOp op, const Array& x, const std::vector<int64_t>& axes, const Array& out);
};
// out = alpha * op(a) @ op(b) + beta * out for 2-D arrays, op transposing when asked.
struct KUSARI_API Gemm {
  static constexpr const char* name = "gemm";
  using Fn = void(const Array& a, bool transpose_a, const Array& b, bool transpose_b, double alpha, double beta,
                  const Array& out);
};
// For x (N, C) floating and labels t (N,) int32/int64: log_p (N, C, contiguous) = log softmax of each row,
// loss = each sample's cross entropy against its target ((N,), zero when ignored) or, when targets.mean,
// their mean (shape ()). Throws IndexError for a label outside [0, C) that is not ignore_label.
struct KUSARI_API SoftmaxCrossEntropy {
  static constexpr const char* name = "softmax_cross_entropy";
  using Fn = void(const Array& x, const Array& t, const CrossEntropyTargets& targets, const Array& log_p,
                  const Array& loss);
};
// gx (N, C, contiguous) = (exp(log_p) - target) times the loss's gradient gy (per sample (N,), or () divided
// by the count of samples when targets.mean), zero on ignored rows; log_p and t as SoftmaxCrossEntropy had.
struct KUSARI_API SoftmaxCrossEntropyGrad {
  static constexpr const char* name = "softmax_cross_entropy_grad";
  using Fn = void(const Array& log_p, const Array& t, const Array& gy, const CrossEntropyTargets& targets,
                  const Array& gx);
};
// hits[i] (bool, (N,)) for x (N, C) floating (any strides) and labels t (N,) int64 contiguous: whether
// t[i] is in [0, C), x[i, t[i]] is not NaN and fewer than k classes c have x[i, c] > x[i, t[i]].
struct KUSARI_API TopKHits {
  static constexpr const char* name = "top_k_hits";
  using Fn = void(const Array& x, const Array& t, int64_t k, const Array& hits);
};
// out[i] = draw number `offset + i` of the stream `seed` (p0, p1: low/high, mean/stddev or p/unused).
struct KUSARI_API Random {
  static constexpr const char* name = "random";
  using Fn = void(Distribution distribution, uint64_t seed, uint64_t offset, double p0, double p1, const Array& out);
};

// The convolution and pooling kernels below take inputs of any layout and write whole contiguous
// outputs allocated by the caller; floating operands share one dtype, index arrays are int64.

// y (N, O, oh, ow) = x (N, C, H, W) correlated with w (O, C/groups, kh, kw), plus b (O) when defined.
struct KUSARI_API Conv2d {
  static constexpr const char* name = "conv2d";
  using Fn = void(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& geometry, const Array& y);
};
// gx (N, C, H, W) = the transposed convolution of gy (N, O, oh, ow) with w (O, C/groups, kh, kw), plus b (C)
// when defined: Conv2d's adjoint in x, and the forward of a deconvolution.
struct KUSARI_API Conv2dBackwardData {
  static constexpr const char* name = "conv2d_backward_data";
  using Fn = void(const Array& gy, const Array& w, const Array& b, const Conv2dGeometry& geometry, const Array& gx);
};
// gw (O, C/groups, kh, kw) = Conv2d's adjoint in w: the correlation of x (N, C, H, W) with gy (N, O, oh, ow).
struct KUSARI_API Conv2dBackwardFilter {
  static constexpr const char* name = "conv2d_backward_filter";
  using Fn = void(const Array& x, const Array& gy, const Conv2dGeometry& geometry, const Array& gw);
};
// y = the maximum of each window of x (padding never wins); indexes (y's shape, int32) = the flat
// position h * W + w of that maximum in its (H, W) plane, or -1 (with y = -inf) for a window wholly in
// padding. y and indexes are both row-major or both channels-last (x is read in their order).
struct KUSARI_API MaxPool2d {
  static constexpr const char* name = "max_pool2d";
  using Fn = void(const Array& x, const Pool2dGeometry& geometry, const Array& y, const Array& indexes);
};
// gx (N, C, H, W) = zeros with each gy[n, c, i] added at plane position indexes[n, c, i] (-1 skipped);
// gx is in indexes' memory order (row-major or channels-last).
struct KUSARI_API MaxPool2dScatter {
  static constexpr const char* name = "max_pool2d_scatter";
  using Fn = void(const Array& gy, const Array& indexes, const Array& gx);
};
// y[n, c, i] = x[n, c] at plane position indexes[n, c, i] (0 where the index is -1); y has indexes' shape
// and memory order (row-major or channels-last).
struct KUSARI_API MaxPool2dGather {
  static constexpr const char* name = "max_pool2d_gather";
  using Fn = void(const Array& x, const Array& indexes, const Array& y);
};
// y = the sum of each window of zero-padded x divided by kh * kw.
struct KUSARI_API AveragePool2d {
  static constexpr const char* name = "average_pool2d";
  using Fn = void(const Array& x, const Pool2dGeometry& geometry, const Array& y);
};
// gx = AveragePool2d's adjoint: each gy / (kh * kw) added over its window (the padding part dropped).
struct KUSARI_API AveragePool2dBackward {
  static constexpr const char* name = "average_pool2d_backward";
  using Fn = void(const Array& gy, const Pool2dGeometry& geometry, const Array& gx);
};
// Copies between host memory and this device type (contiguous arrays of one dtype and shape).
struct KUSARI_API Transfer {
  static constexpr const char* name = "transfer";
  using Fn = void(const Array& src, const Array& dst);
};
}  // namespace kernel_ops

// Installs the kernels of every backend built into the library (the CPU's), once; kernel_for calls it
// when it first finds an entry empty, so no static initializer has to survive a static link.
KUSARI_API void register_builtin_backends();

// The table of one operation's kernels, one per device type, with the backend that registered each.
template <class Op>
struct KUSARI_API KernelTable {
  static inline std::array<std::atomic<typename Op::Fn*>, kDeviceTypeCount> entries{};
  static inline std::array<const char*, kDeviceTypeCount> backends{};
};

// Serializes every change to the kernel tables.
KUSARI_API std::mutex& kernel_registration_mutex();

// Installs `fn`, from the backend named `backend`, as Op's kernel for `type`; a second kernel for the
// same operation and device type throws ValueError naming both backends. Backends built into the
// library call this from register_builtin_backends.
template <class Op>
void install_kernel(DeviceType type, const char* backend, typename Op::Fn* fn) {
  const auto slot = static_cast<size_t>(type);
  std::lock_guard<std::mutex> lock(kernel_registration_mutex());
  if (KernelTable<Op>::entries[slot].load(std::memory_order_acquire)) {
    throw ValueError(cat(Op::name, ": backend '", backend, "' registers a kernel for ", Device{type, 0},
                         " devices, which backend '", KernelTable<Op>::backends[slot], "' already registered"));
  }
  KernelTable<Op>::backends[slot] = backend;
  KernelTable<Op>::entries[slot].store(fn, std::memory_order_release);
}

// Registers another backend's kernel: the built-in backends are installed first, so a kernel for an
// operation and device type they already cover is refused here, at the caller's registration.
template <class Op>
void register_kernel(DeviceType type, const char* backend, typename Op::Fn* fn) {
  register_builtin_backends();
  install_kernel<Op>(type, backend, fn);
}

// Op's kernel for `device`; throws DeviceError when that backend has none.
template <class Op>
typename Op::Fn* kernel_for(const Device& device) {
  auto& entry = KernelTable<Op>::entries[static_cast<size_t>(device.type)];
  // Relaxed: an entry publishes only a function's address, and this load is on every operation's path.
  auto* fn = entry.load(std::memory_order_relaxed);
  if (!fn) [[unlikely]] {
    register_builtin_backends();
    fn = entry.load(std::memory_order_acquire);
  }
  if (!fn) throw DeviceError(cat(Op::name, ": no kernel is registered for device ", device));
  return fn;
}

}  // namespace kusari
