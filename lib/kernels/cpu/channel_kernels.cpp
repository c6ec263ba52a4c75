// CPU per-channel kernels of batch normalization: sums over every axis but the channel axis, and a
// per-channel affine map, each in one pass. In a row-major (N, C, ...) array a channel's plane of one
// sample is contiguous, and in one with channel rows (channels-last, or 2 axes) the C channels of one
// position are; either way the inner loops run over plain runs the compiler vectorises.

#include <type_traits>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/core/memory_order.h>
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

// Channel rows are processed a chunk of rows at a time as one flat run of about kChunk values, with the
// per-channel coefficients repeated once per row of the chunk, so the inner loops are long plain runs
// over aligned arrays with no per-row restart.
constexpr int64_t kChunk = 256;
// Chunks summed into one float partial before it joins the float64 totals (a few thousand values of a
// channel at most, as in the row-major path's planes).
constexpr int64_t kChunksPerBlock = 32;

// The chunking of an array with channel rows: C channels, rows, and the rows of one chunk.
struct RowChunks {
  int64_t channels, rows, chunk_rows;
  explicit RowChunks(const Array& x)
      : channels(x.shape()[1]),
        rows(x.size() / std::max<int64_t>(1, x.shape()[1])),
        chunk_rows(std::max<int64_t>(1, kChunk / std::max<int64_t>(1, channels))) {}
  // Values in a whole chunk.
  int64_t chunk() const { return chunk_rows * channels; }
  // Number of chunks (the last may be short).
  int64_t count() const { return (rows + chunk_rows - 1) / chunk_rows; }
  // Values in chunk k.
  int64_t length(int64_t k) const { return (std::min(rows, (k + 1) * chunk_rows) - k * chunk_rows) * channels; }
};

// Per-channel float64 coefficients in the compute type, repeated for every row of a chunk (empty for
// an undefined array).
template <class C>
std::vector<C> repeated(const Array& c, const RowChunks& chunks) {
  if (!c.defined()) return {};
  const double* values = c.data<double>();
  std::vector<C> out(static_cast<size_t>(chunks.chunk()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<C>(values[i % static_cast<size_t>(chunks.channels)]);
  return out;
}

// channel_sums over channel rows: each block of chunks sums into float partials per position of a chunk,
// which fold into float64 per-channel partials of the block; the blocks' partials add up in block order,
// so the result does not depend on the thread count.
template <class T>
void row_sums(const Array& x, const Array& y, const ChannelGate& gate, double* sum_out, double* product_out) {
  using C = compute_type_t<T>;
  const RowChunks chunks(x);
  const int64_t channels = chunks.channels, width = chunks.chunk();
  const T* xs = static_cast<const T*>(x.raw_data());
  const T* ys = static_cast<const T*>(y.raw_data());
  const T* gs = gate.input.defined() ? static_cast<const T*>(gate.input.raw_data()) : nullptr;
  const std::vector<C> gate_scale = repeated<C>(gate.scale, chunks), gate_shift = repeated<C>(gate.shift, chunks);
  const C* scale = gate_scale.data();
  const C* shift = gate_shift.data();
  const int64_t blocks = (chunks.count() + kChunksPerBlock - 1) / kChunksPerBlock;
  std::vector<double> partial(static_cast<size_t>(2 * blocks * channels), 0.0);
  parallel_for(blocks, std::max<int64_t>(1, kGrain / (kChunksPerBlock * width)), [&](int64_t begin, int64_t end) {
    std::vector<C> sum_buffer(static_cast<size_t>(width)), product_buffer(static_cast<size_t>(width));
    C* sum = sum_buffer.data();
    C* product = product_buffer.data();
    for (int64_t block = begin; block < end; ++block) {
      std::fill(sum_buffer.begin(), sum_buffer.end(), C(0));
      std::fill(product_buffer.begin(), product_buffer.end(), C(0));
      for (int64_t k = block * kChunksPerBlock; k < std::min(chunks.count(), (block + 1) * kChunksPerBlock); ++k) {
        const int64_t n = chunks.length(k), offset = k * width;
        const T* xk = xs + offset;
        const T* yk = ys + offset;
        if (gs) {
          const T* gk = gs + offset;
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) {
            const C value = load(xk[j]);  // read unconditionally, so the select vectorises
            const C u = scale[j] * load(gk[j]) + shift[j] <= C(0) ? C(0) : value;
            sum[j] += u;
            product[j] += u * load(yk[j]);
          }
        } else {
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) {
            const C u = load(xk[j]);
            sum[j] += u;
            product[j] += u * load(yk[j]);
          }
        }
      }
      double* out = partial.data() + 2 * block * channels;
      for (int64_t j = 0; j < width; ++j) {
        out[j % channels] += static_cast<double>(sum[j]);
        out[channels + j % channels] += static_cast<double>(product[j]);
      }
    }
  });
  std::fill(sum_out, sum_out + channels, 0.0);
  std::fill(product_out, product_out + channels, 0.0);
  for (int64_t block = 0; block < blocks; ++block) {
    const double* in = partial.data() + 2 * block * channels;
    for (int64_t c = 0; c < channels; ++c) {
      sum_out[c] += in[c];
      product_out[c] += in[channels + c];
    }
  }
}

// channel_affine over channel rows, chunks spread over the thread pool.
template <bool kGated, bool kTwoOperands, bool kRelu, class T>
void row_affine(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                const ChannelGate& gate, const Array& out) {
  using C = compute_type_t<T>;
  const RowChunks chunks(x);
  const int64_t width = chunks.chunk();
  const T* xs = static_cast<const T*>(x.raw_data());
  const T* ys = kTwoOperands ? static_cast<const T*>(y.raw_data()) : nullptr;
  const T* gs = kGated ? static_cast<const T*>(gate.input.raw_data()) : nullptr;
  T* os = static_cast<T*>(out.raw_data());
  const std::vector<C> coefficient_a = repeated<C>(a, chunks), coefficient_b = repeated<C>(b, chunks),
                       coefficient_d = repeated<C>(d, chunks), gate_a = repeated<C>(gate.scale, chunks),
                       gate_d = repeated<C>(gate.shift, chunks);
  const C *scale = coefficient_a.data(), *scale_y = coefficient_b.data(), *shift = coefficient_d.data();
  const C *gate_scale = gate_a.data(), *gate_shift = gate_d.data();
  parallel_for(chunks.count(), std::max<int64_t>(1, kGrain / width), [&](int64_t begin, int64_t end) {
    const C *a_j = scale, *b_j = scale_y, *d_j = shift, *gate_a_j = gate_scale, *gate_d_j = gate_shift;
    for (int64_t k = begin; k < end; ++k) {
      const int64_t n = chunks.length(k), offset = k * width;
      const T* xk = xs + offset;
      const T* yk = kTwoOperands ? ys + offset : nullptr;
      const T* gk = kGated ? gs + offset : nullptr;
      T* ok = os + offset;
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) {
        const C term = a_j[j] * load(xk[j]);  // computed unconditionally, so the gate's select vectorises
        C v = d_j[j];
        if constexpr (kGated) {
          v += gate_a_j[j] * load(gk[j]) + gate_d_j[j] <= C(0) ? C(0) : term;
        } else {
          v += term;
        }
        if constexpr (kTwoOperands) v += b_j[j] * load(yk[j]);
        if constexpr (kRelu) v = v <= C(0) ? C(0) : v;
        ok[j] = store<T>(v);
      }
    }
  });
}

void channel_sums_kernel(const Array& x, const Array& y, const ChannelGate& gate, const Array& sums,
                         const Array& products) {
  const ChannelLayout layout(x);
  double* sum_out = sums.data<double>();
  double* product_out = products.data<double>();
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<compute_type_t<T>>) {
      if (has_channel_rows(x)) return row_sums<T>(x, y, gate, sum_out, product_out);
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
      if (has_channel_rows(x)) {
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
