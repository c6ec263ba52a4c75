// CPU per-channel kernels of batch normalization: sums over every axis but the channel axis, and a
// per-channel affine map, each in one pass. In a row-major (N, C, ...) array a channel's plane of one
// sample is contiguous, and in one with channel rows (channels-last, or 2 axes) the C channels of one
// position are; either way the inner loops run over plain runs the compiler vectorises.

#include <array>
#include <type_traits>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/normalization.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>
#include <kusari/kernels/detail/batch_norm_functions.h>
#include <kusari/kernels/detail/batch_norm_passes.h>
#include <kusari/kernels/detail/channel_functions.h>

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
  bool keeps(int64_t i) const { return gate_keeps(scale, load(input[i]), shift); }
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

// Channel rows are processed in tasks of one block of kBlockRows rows, spread over the thread pool. A
// task walks its block in strips of kStripRows rows, and each strip one group of kLanes adjacent
// channels at a time (a last, narrower group takes the channels left over): the group's coefficients
// and running sums stay in registers over the strip's rows, and a strip reads a few short streams, so
// wide rows (thousands of channels) stream as well as narrow ones.
constexpr int64_t kLanes = 16;
// Rows of one task; a channel's float partial sums add up at most this many values before joining the
// float64 totals.
constexpr int64_t kBlockRows = 128;
// Rows of one strip.
constexpr int64_t kStripRows = 16;

// The row blocks of an array with channel rows.
struct RowBlocks {
  int64_t rows, channels, count;
  explicit RowBlocks(const Array& x)
      : rows(x.size() / std::max<int64_t>(1, x.shape()[1])),
        channels(x.shape()[1]),
        count((rows + kBlockRows - 1) / kBlockRows) {}
  // Blocks per parallel chunk, so that a chunk holds about kGrain values.
  int64_t grain() const { return std::max<int64_t>(1, kGrain / (kBlockRows * std::max<int64_t>(1, channels))); }
};

// Runs body(lanes, first channel, first row, end row) for every strip and channel group of block k, with
// `lanes` a compile-time constant (std::integral_constant) for a full group, so that its loops unroll
// into registers.
template <class Body>
void for_each_strip(const RowBlocks& blocks, int64_t k, Body&& body) {
  const int64_t block_end = std::min(blocks.rows, (k + 1) * kBlockRows);
  for (int64_t begin = k * kBlockRows; begin < block_end; begin += kStripRows) {
    const int64_t end = std::min(block_end, begin + kStripRows);
    int64_t first = 0;
    for (; first + kLanes <= blocks.channels; first += kLanes) {
      body(std::integral_constant<int64_t, kLanes>{}, first, begin, end);
    }
    if (first < blocks.channels) body(blocks.channels - first, first, begin, end);
  }
}

// kLanes values of the compute type C as one vector, which the compiler keeps in registers.
template <class C>
using Lanes [[gnu::vector_size(kLanes * sizeof(C))]] = C;

// The first `lanes` elements at p in the compute type, zeros after them.
template <class C, class T>
inline Lanes<C> load_lanes(const T* p, int64_t lanes) {
  Lanes<C> v{};
  for (int64_t k = 0; k < lanes; ++k) v[k] = load(p[k]);
  return v;
}

// Writes the first `lanes` values of v to p as T.
template <class T, class V>
inline void store_lanes(T* p, const V& v, int64_t lanes) {
  for (int64_t k = 0; k < lanes; ++k) p[k] = store<T>(v[k]);
}

// The per-channel float64 coefficients of c in the compute type for rows of `channels` channels,
// padded with zeros to whole groups of lanes and one more group, so that a group read at any channel
// stays inside (all zeros when c is undefined).
template <class C>
std::vector<C> lane_coefficients(const Array& c, int64_t channels) {
  std::vector<C> out(static_cast<size_t>((channels + kLanes - 1) / kLanes * kLanes + kLanes), C(0));
  const int64_t given = c.defined() ? std::min(c.size(), channels) : 0;
  for (int64_t i = 0; i < given; ++i) out[static_cast<size_t>(i)] = static_cast<C>(c.data<double>()[i]);
  return out;
}

// channel_sums over channel rows: each block sums into float partials per channel, kept in a per-thread
// buffer between strips, then into its own float64 slot; the blocks' slots add up in block order, so
// the result does not depend on the thread count.
template <class T>
void row_sums(const Array& x, const Array& y, const ChannelGate& gate, double* sum_out, double* product_out) {
  using C = compute_type_t<T>;
  const RowBlocks blocks(x);
  const int64_t channels = blocks.channels;
  const T* xs = static_cast<const T*>(x.raw_data());
  const T* ys = static_cast<const T*>(y.raw_data());
  const T* gs = gate.input.defined() ? static_cast<const T*>(gate.input.raw_data()) : nullptr;
  const std::vector<C> gate_scale = lane_coefficients<C>(gate.scale, channels),
                       gate_shift = lane_coefficients<C>(gate.shift, channels);
  std::vector<double> partial(static_cast<size_t>(2 * blocks.count * channels));
  parallel_for(blocks.count, blocks.grain(), [&](int64_t block_begin, int64_t block_end) {
    std::vector<C> sums(static_cast<size_t>(2 * channels));  // Σx then Σx·y of the current block
    for (int64_t k = block_begin; k < block_end; ++k) {
      std::fill(sums.begin(), sums.end(), C(0));
      for_each_strip(blocks, k, [&](auto lane_count, int64_t first, int64_t begin, int64_t end) {
        const int64_t lanes = lane_count;
        const Lanes<C> scale = load_lanes<C>(gate_scale.data() + first, kLanes);
        const Lanes<C> shift = load_lanes<C>(gate_shift.data() + first, kLanes);
        Lanes<C> sum = load_lanes<C>(sums.data() + first, lanes);
        Lanes<C> product = load_lanes<C>(sums.data() + channels + first, lanes);
        for (int64_t r = begin; r < end; ++r) {
          const int64_t offset = r * channels + first;
          Lanes<C> u = load_lanes<C>(xs + offset, lanes);
          if (gs) u = scale * load_lanes<C>(gs + offset, lanes) + shift <= C(0) ? Lanes<C>{} : u;
          sum += u;
          product += u * load_lanes<C>(ys + offset, lanes);
        }
        store_lanes(sums.data() + first, sum, lanes);
        store_lanes(sums.data() + channels + first, product, lanes);
      });
      double* out = partial.data() + 2 * k * channels;
      for (int64_t c = 0; c < 2 * channels; ++c) out[c] = static_cast<double>(sums[static_cast<size_t>(c)]);
    }
  });
  std::fill(sum_out, sum_out + channels, 0.0);
  std::fill(product_out, product_out + channels, 0.0);
  for (int64_t k = 0; k < blocks.count; ++k) {
    const double* in = partial.data() + 2 * k * channels;
    for (int64_t c = 0; c < channels; ++c) {
      sum_out[c] += in[c];
      product_out[c] += in[channels + c];
    }
  }
}

// channel_affine over channel rows, blocks spread over the thread pool.
template <bool kGated, bool kTwoOperands, bool kRelu, class T>
void row_affine(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                const ChannelGate& gate, const Array& out) {
  using C = compute_type_t<T>;
  const RowBlocks blocks(x);
  const int64_t channels = blocks.channels;
  const T* xs = static_cast<const T*>(x.raw_data());
  const T* ys = kTwoOperands ? static_cast<const T*>(y.raw_data()) : nullptr;
  const T* gs = kGated ? static_cast<const T*>(gate.input.raw_data()) : nullptr;
  T* os = static_cast<T*>(out.raw_data());
  const std::vector<C> coefficient_a = lane_coefficients<C>(a, channels),
                       coefficient_b = lane_coefficients<C>(b, channels),
                       coefficient_d = lane_coefficients<C>(d, channels),
                       gate_a = lane_coefficients<C>(gate.scale, channels),
                       gate_d = lane_coefficients<C>(gate.shift, channels);
  parallel_for(blocks.count, blocks.grain(), [&](int64_t block_begin, int64_t block_end) {
    for (int64_t k = block_begin; k < block_end; ++k) {
      for_each_strip(blocks, k, [&](auto lane_count, int64_t first, int64_t begin, int64_t end) {
        const int64_t lanes = lane_count;
        const Lanes<C> scale = load_lanes<C>(coefficient_a.data() + first, kLanes);
        const Lanes<C> scale_y = load_lanes<C>(coefficient_b.data() + first, kLanes);
        const Lanes<C> shift = load_lanes<C>(coefficient_d.data() + first, kLanes);
        const Lanes<C> gate_scale = load_lanes<C>(gate_a.data() + first, kLanes);
        const Lanes<C> gate_shift = load_lanes<C>(gate_d.data() + first, kLanes);
        for (int64_t r = begin; r < end; ++r) {
          const int64_t offset = r * channels + first;
          Lanes<C> term = scale * load_lanes<C>(xs + offset, lanes);
          if constexpr (kGated) {
            term = gate_scale * load_lanes<C>(gs + offset, lanes) + gate_shift <= C(0) ? Lanes<C>{} : term;
          }
          Lanes<C> v = shift + term;
          if constexpr (kTwoOperands) v += scale_y * load_lanes<C>(ys + offset, lanes);
          if constexpr (kRelu) v = v <= C(0) ? Lanes<C>{} : v;
          store_lanes(os + offset, v, lanes);
        }
      });
    }
  });
}

// True when the row kernels take x: its memory is rows of its channels, and not one channel of planes
// (the row-major planes' bytes, which the plane kernels sum as they always have).
bool takes_rows(const Array& x) { return has_channel_rows(x) && (x.ndim() <= 2 || x.shape()[1] > 1); }

// ChannelSums of one group (the whole batch).
void group_sums(const Array& x, const Array& y, const ChannelGate& gate, const Array& sums, const Array& products) {
  const ChannelLayout layout(x);
  double* sum_out = sums.data<double>();
  double* product_out = products.data<double>();
  visit_floating_dtype(x.dtype(), "channel_sums kernel", [&]<class T>() {
    if (takes_rows(x)) return row_sums<T>(x, y, gate, sum_out, product_out);
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
  });
}

// ChannelAffine of one group (the whole batch).
void group_affine(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                  const ChannelGate& gate, bool relu, const Array& out) {
  const ChannelLayout layout(x);
  const double* as = a.data<double>();
  const double* bs = y.defined() ? b.data<double>() : nullptr;
  const double* ds = d.data<double>();
  visit_floating_dtype(x.dtype(), "channel_affine kernel", [&]<class T>() {
    using C = compute_type_t<T>;
    if (takes_rows(x)) {
      return with_flag(gate.input.defined(), [&](auto gated) {
        with_flag(y.defined(), [&](auto two_operands) {
          with_flag(relu, [&](auto rectified) {
            row_affine<gated(), two_operands(), rectified(), T>(x, a, y, b, d, gate, out);
          });
        });
      });
    }
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
  });
}

// Group g's samples of a (of `per` samples a group); undefined stays undefined.
Array group_of(const Array& a, int64_t g, int64_t per) {
  return a.defined() ? a.get_item({Slice{g * per, (g + 1) * per}}) : a;
}

// Row g of (groups, C) per-group coefficients; undefined stays undefined.
Array row_of(const Array& c, int64_t groups, int64_t g) {
  return c.defined() ? c.reshape({groups, c.size() / groups}).get_item({g}) : c;
}

// Group g's part of a gate with per-group coefficients.
ChannelGate gate_of(const ChannelGate& gate, int64_t groups, int64_t g, int64_t per) {
  if (!gate.input.defined()) return {};
  return {group_of(gate.input, g, per), row_of(gate.scale, groups, g), row_of(gate.shift, groups, g)};
}

// The kernels group by group.
void channel_sums_kernel(const Array& x, const Array& y, const ChannelGate& gate, int64_t groups, const Array& sums,
                         const Array& products) {
  if (groups == 1) return group_sums(x, y, gate, sums, products);
  const int64_t per = x.shape()[0] / groups;
  for (int64_t g = 0; g < groups; ++g) {
    group_sums(group_of(x, g, per), group_of(y, g, per), gate_of(gate, groups, g, per), row_of(sums, groups, g),
               row_of(products, groups, g));
  }
}

void channel_affine_kernel(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                           const ChannelGate& gate, bool relu, int64_t groups, const Array& out) {
  if (groups == 1) return group_affine(x, a, y, b, d, gate, relu, out);
  const int64_t per = x.shape()[0] / groups;
  for (int64_t g = 0; g < groups; ++g) {
    group_affine(group_of(x, g, per), row_of(a, groups, g), group_of(y, g, per), row_of(b, groups, g),
                 row_of(d, groups, g), gate_of(gate, groups, g, per), relu, group_of(out, g, per));
  }
}

// A per-channel parameter as contiguous float64 values on the host.
Array channel_values(const Array& p) { return p.astype(Dtype::float64).contiguous(); }

void statistics_of_sums_kernel(const Array& sums, const Array& square_sums, double eps, const Array& gamma,
                               const Array& beta, const BatchNormStatistics& out) {
  const Array g = channel_values(gamma), b = channel_values(beta);
  const double* gs = g.data<double>();
  const double* bs = b.data<double>();
  const double* sum = sums.data<double>();
  const double* square_sum = square_sums.data<double>();
  double* mean = out.mean.data<double>();
  double* var = out.var.data<double>();
  double* inv_std = out.inv_std.data<double>();
  double* scale = out.scale.data<double>();
  double* shift = out.shift.data<double>();
  const auto count = static_cast<double>(out.count);
  const int64_t channels = g.size();
  for (int64_t i = 0; i < sums.size(); ++i) {
    const int64_t c = i % channels;
    const batch_norm::ChannelStatistics s =
        batch_norm::statistics_of_sums(sum[i], square_sum[i], count, eps, gs[c], bs[c]);
    mean[i] = s.mean;
    var[i] = s.var;
    inv_std[i] = s.inv_std;
    scale[i] = s.scale;
    shift[i] = s.shift;
  }
}

void backward_coefficients_kernel(const Array& gy_sums, const Array& gy_x_sums, const BatchNormStatistics& s,
                                  const Array& gamma, const Array& gbeta_total, const Array& ggamma_total,
                                  const Array& ggamma, const Array& a, const Array& b, const Array& d) {
  const double* gy_sum = gy_sums.data<double>();
  const double* gy_x_sum = gy_x_sums.data<double>();
  const double* mean = s.mean.data<double>();
  const double* inv_std = s.inv_std.data<double>();
  double* gg = ggamma.data<double>();
  for (int64_t i = 0; i < gy_sums.size(); ++i) {
    gg[i] = batch_norm::gamma_gradient(gy_sum[i], gy_x_sum[i], mean[i], inv_std[i]);
  }
  if (!a.defined()) return;
  const Array g = channel_values(gamma);
  const double* gs = g.data<double>();
  const double* gbeta = gbeta_total.defined() ? gbeta_total.data<double>() : gy_sum;
  const double* ggamma_all = ggamma_total.defined() ? ggamma_total.data<double>() : gg;
  double* as = a.data<double>();
  double* bs = b.data<double>();
  double* ds = d.data<double>();
  const auto count = static_cast<double>(s.count);
  const int64_t channels = g.size();
  for (int64_t i = 0; i < gy_sums.size(); ++i) {
    const batch_norm::DataGradientMap m =
        batch_norm::data_gradient_map(gbeta[i], ggamma_all[i], mean[i], inv_std[i], gs[i % channels], count);
    as[i] = m.a;
    bs[i] = m.b;
    ds[i] = m.d;
  }
}

void running_averages_kernel(const Array& mean, const Array& var, double decay, double mean_share,
                             double var_share, const Array& average_mean, const Array& average_var) {
  batch_norm::visit_running_average_dtypes(average_mean.dtype(), mean.dtype(), [&]<class T, class S>() {
    const S* batch_mean = mean.data<S>();
    const S* batch_var = var.data<S>();
    T* avg_mean = average_mean.data<T>();
    T* avg_var = average_var.data<T>();
    const auto d = static_cast<T>(decay), ms = static_cast<T>(mean_share), vs = static_cast<T>(var_share);
    for (int64_t c = 0; c < average_mean.size(); ++c) {
      avg_mean[c] = batch_norm::running_average(avg_mean[c], batch_mean[c], d, ms);
      avg_var[c] = batch_norm::running_average(avg_var[c], batch_var[c], d, vs);
    }
  });
}

}  // namespace

void register_normalization_kernels() {
  install_kernel<kernel_ops::ChannelSums>(DeviceType::cpu, "cpu", channel_sums_kernel);
  install_kernel<kernel_ops::ChannelAffine>(DeviceType::cpu, "cpu", channel_affine_kernel);
  install_kernel<kernel_ops::BatchNormForward>(DeviceType::cpu, "cpu", ops::detail::batch_norm_forward_kernel);
  install_kernel<kernel_ops::BatchNormBackward>(DeviceType::cpu, "cpu",
                                               ops::detail::batch_norm_backward_kernel);
  install_kernel<kernel_ops::BatchNormStatisticsOfSums>(DeviceType::cpu, "cpu", statistics_of_sums_kernel);
  install_kernel<kernel_ops::BatchNormBackwardCoefficients>(DeviceType::cpu, "cpu", backward_coefficients_kernel);
  install_kernel<kernel_ops::BatchNormRunningAverages>(DeviceType::cpu, "cpu", running_averages_kernel);
}

}  // namespace kusari::kernels::cpu
