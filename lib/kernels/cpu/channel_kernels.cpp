// CPU per-channel kernels of batch normalization: sums over every axis but the channel axis, and a
// per-channel affine map, each in one pass over contiguous (N, C, ...) arrays. A channel's plane of
// one sample is contiguous, so the inner loops run over plain runs the compiler vectorises.

#include <type_traits>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cpu/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

// (N, C, plane) extents of an (N, C, ...) array.
struct ChannelLayout {
  int64_t batch, channels, plane;
  explicit ChannelLayout(const Array& x)
      : batch(x.shape()[0]), channels(x.shape()[1]), plane(x.size() / std::max<int64_t>(1, batch * channels)) {}
  // Offset of sample n's plane of channel c.
  int64_t offset(int64_t n, int64_t c) const { return (n * channels + c) * plane; }
};

// A gate's view of one plane: keeps element i unless scale·input[i] + shift <= 0 (NaN is kept, so it
// propagates as through relu).
template <class T>
struct PlaneGate {
  using C = compute_type_t<T>;
  const T* input;  // null: every element is kept
  C scale, shift;
  bool keeps(int64_t i) const { return !(scale * load(input[i]) + shift <= C(0)); }
};

// The gate of sample n's plane of channel c (a null input when the gate is undefined).
template <class T>
PlaneGate<T> plane_gate(const ChannelGate& gate, const ChannelLayout& layout, int64_t n, int64_t c) {
  using C = compute_type_t<T>;
  if (!gate.input.defined()) return {nullptr, C(0), C(0)};
  return {static_cast<const T*>(gate.input.raw_data()) + layout.offset(n, c),
          static_cast<C>(gate.scale.data<double>()[c]), static_cast<C>(gate.shift.data<double>()[c])};
}

// Σ x[i] and Σ x[i]·y[i] over one plane, x gated, summed in the compute type (vectorised: the
// simd reduction lets the compiler reorder the additions) and returned in float64.
template <bool kGated, class T>
std::pair<double, double> plane_sums(const T* x, const T* y, const PlaneGate<T>& gate, int64_t n) {
  using C = compute_type_t<T>;
  C sum = 0, product = 0;
#pragma omp simd reduction(+ : sum, product)
  for (int64_t i = 0; i < n; ++i) {
    C u = load(x[i]);
    if constexpr (kGated) u = gate.keeps(i) ? u : C(0);
    sum += u;
    product += u * load(y[i]);
  }
  return {static_cast<double>(sum), static_cast<double>(product)};
}

// out[i] = scale·x[i] (x gated) + scale_y·y[i] + shift over one plane, then max(·, 0) when kRelu.
template <bool kGated, bool kTwoOperands, bool kRelu, class T>
void plane_affine(const T* x, const T* y, compute_type_t<T> scale, compute_type_t<T> scale_y,
                  compute_type_t<T> shift, const PlaneGate<T>& gate, T* out, int64_t n) {
  using C = compute_type_t<T>;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    C v = shift;
    if constexpr (kGated) {
      v += gate.keeps(i) ? scale * load(x[i]) : C(0);
    } else {
      v += scale * load(x[i]);
    }
    if constexpr (kTwoOperands) v += scale_y * load(y[i]);
    if constexpr (kRelu) v = v <= C(0) ? C(0) : v;
    out[i] = store<T>(v);
  }
}

// Calls body(std::bool_constant<b>{}) for a runtime flag b, so the flag becomes a template argument.
template <class Body>
void with_flag(bool flag, Body&& body) {
  if (flag) {
    body(std::true_type{});
  } else {
    body(std::false_type{});
  }
}

void channel_sums_kernel(const Array& x, const Array& y, const ChannelGate& gate, const Array& sums,
                         const Array& products) {
  const ChannelLayout layout(x);
  double* sum_out = sums.data<double>();
  double* product_out = products.data<double>();
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<compute_type_t<T>>) {
      const T* xs = static_cast<const T*>(x.raw_data());
      const T* ys = static_cast<const T*>(y.raw_data());
      const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, layout.batch * layout.plane));
      parallel_for(layout.channels, grain, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          double total = 0, total_product = 0;
          for (int64_t n = 0; n < layout.batch; ++n) {
            const PlaneGate<T> g = plane_gate<T>(gate, layout, n, c);
            const T* xp = xs + layout.offset(n, c);
            const T* yp = ys + layout.offset(n, c);
            const auto [s, p] = g.input ? plane_sums<true>(xp, yp, g, layout.plane)
                                        : plane_sums<false>(xp, yp, g, layout.plane);
            total += s;
            total_product += p;
          }
          sum_out[c] = total;
          product_out[c] = total_product;
        }
      });
    } else {
      throw DtypeError(cat("channel_sums kernel: expected a floating dtype, got ", x.dtype()));
    }
  });
}

void channel_affine_kernel(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                           const ChannelGate& gate, bool relu, const Array& out) {
  const ChannelLayout layout(x);
  const double* as = a.data<double>();
  const double* bs = y.defined() ? b.data<double>() : nullptr;
  const double* ds = d.data<double>();
  visit_dtype(x.dtype(), [&]<class T>() {
    using C = compute_type_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* xs = static_cast<const T*>(x.raw_data());
      const T* ys = y.defined() ? static_cast<const T*>(y.raw_data()) : nullptr;
      T* os = static_cast<T*>(out.raw_data());
      const int64_t planes = layout.batch * layout.channels;
      const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, layout.plane));
      parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
          const int64_t n = k / layout.channels, c = k % layout.channels, offset = k * layout.plane;
          const C scale = static_cast<C>(as[c]), shift = static_cast<C>(ds[c]);
          const C scale_y = ys ? static_cast<C>(bs[c]) : C(0);
          const PlaneGate<T> g = plane_gate<T>(gate, layout, n, c);
          const T* xp = xs + offset;
          const T* yp = ys ? ys + offset : nullptr;
          with_flag(g.input != nullptr, [&](auto gated) {
            with_flag(yp != nullptr, [&](auto two_operands) {
              with_flag(relu, [&](auto rectified) {
                plane_affine<gated(), two_operands(), rectified()>(xp, yp, scale, scale_y, shift, g, os + offset,
                                                                    layout.plane);
              });
            });
          });
        }
      });
    } else {
      throw DtypeError(cat("channel_affine kernel: expected a floating dtype, got ", x.dtype()));
    }
  });
}

const bool registered = [] {
  register_kernel<kernel_ops::ChannelSums>(DeviceType::cpu, channel_sums_kernel);
  register_kernel<kernel_ops::ChannelAffine>(DeviceType::cpu, channel_affine_kernel);
  return true;
}();

}  // namespace
}  // namespace kusari::kernels::cpu
