// CUDA per-channel kernels of batch normalization, for (N, C, ...) arrays of any strides (row-major,
// channels-last or views): sums over every axis but the channel axis (each channel's elements split
// into slices that blocks sum in float64, the slices then added in order), and the per-channel affine
// map, one thread per element: the passes of batch_norm_passes.h, which batch_norm.cpp runs where
// cuDNN's fused batch normalization does not.

#include <algorithm>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/detail/channel_functions.h>
#include <kusari/kernels/ops/normalization.h>
#include <kusari/kernels/routines.h>

namespace kusari::kernels::cuda {
namespace {

// The channel of logical element i of an (N, C, plane) array.
__device__ inline int64_t channel_of(int64_t i, int64_t channels, int64_t plane) { return i / plane % channels; }

constexpr int kSumThreads = 256;

// Block (c, s) adds slice s of channel c's elements (x gated; x·y for the products) into
// partial[2 · (c · slices + s)] and the next slot.
template <class T>
__global__ void channel_slice_sums(KernelLayout<3> layout, int64_t channels, int64_t plane, int64_t slices, bool gated,
                                   const double* gate_scale, const double* gate_shift, double* partial) {
  using C = compute_type_t<T>;
  __shared__ double sums[kSumThreads], products[kSumThreads];
  const int64_t c = blockIdx.x, s = blockIdx.y;
  const int64_t per_channel = layout.size / channels;
  const int64_t begin = per_channel * s / slices, end = per_channel * (s + 1) / slices;
  const C scale = gated ? static_cast<C>(gate_scale[c]) : C(0), shift = gated ? static_cast<C>(gate_shift[c]) : C(0);
  double sum = 0, product = 0;
  for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
    const int64_t i = (j / plane * channels + c) * plane + j % plane;
    C u = load(element<T>(layout, 0, i));
    if (gated && !gate_keeps(scale, load(element<T>(layout, 2, i)), shift)) u = C(0);
    sum += static_cast<double>(u);
    product += static_cast<double>(u * load(element<T>(layout, 1, i)));
  }
  sums[threadIdx.x] = sum;
  products[threadIdx.x] = product;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sums[threadIdx.x] += sums[threadIdx.x + half];
      products[threadIdx.x] += products[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[2 * (c * slices + s)] = sums[0];
    partial[2 * (c * slices + s) + 1] = products[0];
  }
}

// The coefficient array as a contiguous float64 array on the device (undefined stays undefined).
Array coefficients(const Array& c) { return c.defined() ? c.astype(Dtype::float64).contiguous() : c; }

const double* data_of(const Array& c) { return c.defined() ? static_cast<const double*>(c.raw_data()) : nullptr; }

void channel_sums_kernel(const Array& x, const Array& y, const ChannelGate& gate, const Array& sums,
                         const Array& products) {
  const int index = device_of<2>({&x, &y}, "channel_sums kernel");
  const int64_t channels = x.shape()[1];
  if (x.size() == 0 || channels == 0) {
    sums.fill(0.0);
    products.fill(0.0);
    return;
  }
  const int64_t plane = x.size() / (x.shape()[0] * channels);
  const int64_t per_channel = x.size() / channels;
  // Slices of about 8 elements per thread, at most 128 per channel.
  const int64_t slices = std::clamp<int64_t>(per_channel / (kSumThreads * 8), 1, 128);
  const bool gated = gate.input.defined();
  const Array gate_scale = coefficients(gate.scale), gate_shift = coefficients(gate.shift);
  const Array partial = Array::empty({channels, slices, 2}, Dtype::float64, x.device());
  const Array& gate_input = gated ? gate.input : x;
  const KernelLayout<3> layout = logical_kernel_layout<3>({&x, &y, &gate_input}, "channel_sums kernel");
  {
    DeviceGuard guard(index);
    visit_floating_dtype(x.dtype(), "channel_sums kernel", [&]<class T>() {
      channel_slice_sums<T><<<dim3(static_cast<unsigned>(channels), static_cast<unsigned>(slices)), kSumThreads, 0,
                              current_stream(index)>>>(layout, channels, plane, slices, gated, data_of(gate_scale),
                                                       data_of(gate_shift), static_cast<double*>(partial.raw_data()));
    });
    check(cudaGetLastError(), "channel_sums kernel");
  }
  const Array totals = ops::sum(partial, {1});  // (C, 2)
  sums.assign(totals.get_item({Slice{}, 0}));
  products.assign(totals.get_item({Slice{}, 1}));
}

template <class T>
__global__ void channel_affine_elements(KernelLayout<4> layout, int64_t channels, int64_t plane, const double* a,
                                        const double* b, const double* d, const double* gate_scale,
                                        const double* gate_shift, bool relu) {
  using C = compute_type_t<T>;
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) {
    const int64_t c = channel_of(i, channels, plane);
    C term = static_cast<C>(a[c]) * load(element<T>(layout, 0, i));
    if (gate_scale &&
        !gate_keeps(static_cast<C>(gate_scale[c]), load(element<T>(layout, 2, i)), static_cast<C>(gate_shift[c]))) {
      term = C(0);
    }
    C v = static_cast<C>(d[c]) + term;
    if (b) v += static_cast<C>(b[c]) * load(element<T>(layout, 1, i));
    if (relu) v = v <= C(0) ? C(0) : v;
    element<T>(layout, 3, i) = store<T>(v);
  }
}

void channel_affine_kernel(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                           const ChannelGate& gate, bool relu, const Array& out) {
  const int index = device_of<2>({&x, &out}, "channel_affine kernel");
  if (out.size() == 0) return;
  const int64_t channels = x.shape()[1];
  const int64_t plane = x.size() / (x.shape()[0] * channels);
  const Array ca = coefficients(a), cb = coefficients(b), cd = coefficients(d);
  const Array gate_scale = coefficients(gate.scale), gate_shift = coefficients(gate.shift);
  const bool gated = gate.input.defined();
  const Array& second = y.defined() ? y : x;
  const Array& gate_input = gated ? gate.input : x;
  const KernelLayout<4> layout = logical_kernel_layout<4>({&x, &second, &gate_input, &out}, "channel_affine kernel");
  DeviceGuard guard(index);
  visit_floating_dtype(x.dtype(), "channel_affine kernel", [&]<class T>() {
    channel_affine_elements<T><<<blocks_for(layout.size), kThreads, 0, current_stream(index)>>>(
        layout, channels, plane, data_of(ca), y.defined() ? data_of(cb) : nullptr, data_of(cd),
        gated ? data_of(gate_scale) : nullptr, gated ? data_of(gate_shift) : nullptr, relu);
  });
  check(cudaGetLastError(), "channel_affine kernel");
}

}  // namespace

void register_normalization_kernels() {
  install_kernel<kernel_ops::ChannelSums>(DeviceType::cuda, "cuda", channel_sums_kernel);
  install_kernel<kernel_ops::ChannelAffine>(DeviceType::cuda, "cuda", channel_affine_kernel);
}

}  // namespace kusari::kernels::cuda
