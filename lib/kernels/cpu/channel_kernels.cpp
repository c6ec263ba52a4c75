// CPU per-channel kernels of batch normalization: sums over every axis but the channel axis, and a
// per-channel affine map, each in one pass over contiguous (N, C, ...) arrays. A channel's plane of
// one sample is contiguous, so the inner loops run over plain runs the compiler vectorises.

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

// Σ x[i] and Σ x[i]·y[i] over one plane, in lanes of the compute type then summed in float64.
template <class T>
std::pair<double, double> plane_sums(const T* x, const T* y, int64_t n) {
  using C = compute_type_t<T>;
  constexpr int64_t kLanes = 16;
  C sum[kLanes] = {}, product[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      const C u = load(x[i + l]);
      sum[l] += u;
      product[l] += u * load(y[i + l]);
    }
  }
  double total = 0, total_product = 0;
  for (; i < n; ++i) {
    total += static_cast<double>(load(x[i]));
    total_product += static_cast<double>(load(x[i])) * static_cast<double>(load(y[i]));
  }
  for (int64_t l = 0; l < kLanes; ++l) {
    total += static_cast<double>(sum[l]);
    total_product += static_cast<double>(product[l]);
  }
  return {total, total_product};
}

void channel_sums_kernel(const Array& x, const Array& y, const Array& sums, const Array& products) {
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
            const auto [s, p] = plane_sums(xs + layout.offset(n, c), ys + layout.offset(n, c), layout.plane);
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
                           const Array& out) {
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
      parallel_for(planes, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, layout.plane)), [&](int64_t begin,
                                                                                                   int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
          const int64_t c = k % layout.channels, offset = k * layout.plane;
          const C scale = static_cast<C>(as[c]), shift = static_cast<C>(ds[c]);
          const T* xp = xs + offset;
          T* op = os + offset;
          if (ys == nullptr) {
            for (int64_t i = 0; i < layout.plane; ++i) op[i] = store<T>(scale * load(xp[i]) + shift);
          } else {
            const C scale_y = static_cast<C>(bs[c]);
            const T* yp = ys + offset;
            for (int64_t i = 0; i < layout.plane; ++i) {
              op[i] = store<T>(scale * load(xp[i]) + scale_y * load(yp[i]) + shift);
            }
          }
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
