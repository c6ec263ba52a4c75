// CUDA per-channel kernels of batch normalization: the sums over every axis but the channel axis and
// the per-channel affine map, the passes of batch_norm_passes.h that batch_norm.cpp runs where cuDNN's
// fused batch normalization does not. Operands are dense, row-major or with their channels innermost
// (others are copied row-major first), and read in 16-byte vectors where the layout allows, as
// channel_plan.h lays a launch out. A block's sums are reduced in a fixed order into one row of
// partial sums (in float32 for the float32 and half types, float64 for float64), each group's rows then
// added in order in float64: the same bits on every run, with no atomics. Ghost batch normalization's
// groups of samples run in the same launch, each block in one group.

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/channel_plan.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/packs.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/cuda/detail/shared_memory.cuh>
#include <kusari/kernels/detail/channel_functions.h>
#include <kusari/kernels/ops/normalization.h>
#include <kusari/kernels/routines.h>

namespace kusari::kernels::cuda {
namespace {

// The type a thread and a block sum elements of T in.
template <class T>
using channel_accumulator_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Row `group` of (groups, C) coefficients for a thread's V lanes (each lane's channel: the next one where
// the channels are innermost, the same one otherwise), in the compute type; zeros where `values` is null.
template <class C, int V>
__device__ inline void lane_coefficients(const ChannelPlan& plan, int64_t group, int64_t first, const double* values,
                                         C (&out)[V]) {
  for (int lane = 0; lane < V; ++lane) {
    const int64_t channel = plan.channels_innermost() ? first + lane : first;
    out[lane] = values ? static_cast<C>(values[group * plan.channels + channel]) : C(0);
  }
}

// Block (x, y) adds its loads (x gated; x·y for the products) into row y of the partial sums: with the
// channels innermost, each thread's lanes per channel, then the block's rows in a tree over threads y;
// in planes, each thread's lanes together, then a tree over the block's threads.
template <class T, int V>
__global__ void channel_block_sums(ChannelPlan plan, const T* x, const T* y, const T* gate_input,
                                   const double* gate_scale, const double* gate_shift, double* partial_sums,
                                   double* partial_products) {
  using C = compute_type_t<T>;
  using A = channel_accumulator_t<T>;
  KUSARI_SHARED_ARRAY(A, shared_sums, kChannelThreads * V);
  KUSARI_SHARED_ARRAY(A, shared_products, kChannelThreads * V);
  const int64_t first = first_channel(plan, blockIdx.x, threadIdx.x), group = group_of_block(plan, blockIdx.y);
  C scale[V], shift[V];
  lane_coefficients<C, V>(plan, group, first < 0 ? 0 : first, gate_input ? gate_scale : nullptr, scale);
  lane_coefficients<C, V>(plan, group, first < 0 ? 0 : first, gate_input ? gate_shift : nullptr, shift);
  A sums[V] = {}, products[V] = {};
  for_each_channel_load(plan, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, [&](int64_t offset, int64_t) {
    const Pack<T, V> xs = load_pack<T, V>(x, offset), ys = load_pack<T, V>(y, offset);
    Pack<T, V> gs = xs;
    if (gate_input) gs = load_pack<T, V>(gate_input, offset);
    for (int lane = 0; lane < V; ++lane) {
      C u = load(xs.v[lane]);
      if (gate_input && !gate_keeps(scale[lane], load(gs.v[lane]), shift[lane])) u = C(0);
      sums[lane] += static_cast<A>(u);
      products[lane] += static_cast<A>(u * load(ys.v[lane]));
    }
  });
  const unsigned thread = threadIdx.y * blockDim.x + threadIdx.x;
  if (plan.channels_innermost()) {
    for (int lane = 0; lane < V; ++lane) {
      shared_sums[thread * V + lane] = sums[lane];
      shared_products[thread * V + lane] = products[lane];
    }
    __syncthreads();
    for (unsigned half = blockDim.y / 2; half > 0; half /= 2) {
      if (threadIdx.y < half) {
        const unsigned other = thread + half * blockDim.x;
        for (int lane = 0; lane < V; ++lane) {
          shared_sums[thread * V + lane] += shared_sums[other * V + lane];
          shared_products[thread * V + lane] += shared_products[other * V + lane];
        }
      }
      __syncthreads();
    }
    // Row 0 of the tree holds the block's channels in order (thread x's lanes at x·V): stored one per
    // thread, so that neighbouring threads store neighbouring channels.
    const int64_t block_first = int64_t{blockIdx.x} * blockDim.x * V;
    for (unsigned k = thread; k < blockDim.x * V && block_first + k < plan.channels; k += blockDim.x * blockDim.y) {
      partial_sums[blockIdx.y * plan.channels + block_first + k] = shared_sums[k];
      partial_products[blockIdx.y * plan.channels + block_first + k] = shared_products[k];
    }
    return;
  }
  A sum = 0, product = 0;
  for (int lane = 0; lane < V; ++lane) {
    sum += sums[lane];
    product += products[lane];
  }
  shared_sums[thread] = sum;
  shared_products[thread] = product;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (thread < half) {
      shared_sums[thread] += shared_sums[thread + half];
      shared_products[thread] += shared_products[thread + half];
    }
    __syncthreads();
  }
  if (thread == 0) {
    partial_sums[blockIdx.y * plan.channels + blockIdx.x] = shared_sums[0];
    partial_products[blockIdx.y * plan.channels + blockIdx.x] = shared_products[0];
  }
}

// sums[g, c] and products[g, c]: column c of group g's rows of the (groups · rows, channels) partial
// sums, added in row order.
__global__ void add_partial_rows(const double* partial_sums, const double* partial_products, int64_t groups,
                                 int64_t rows, int64_t channels, double* sums, double* products) {
  KUSARI_FOR_EACH_ELEMENT(k, groups * channels) {
    const int64_t first = k / channels * rows * channels + k % channels;
    double sum = 0, product = 0;
    for (int64_t row = 0; row < rows; ++row) {
      sum += partial_sums[first + row * channels];
      product += partial_products[first + row * channels];
    }
    sums[k] = sum;
    products[k] = product;
  }
}

// out = a·x + b·y + d per lane's channel, x gated, then the ReLU when relu (NaN stays).
template <class T, int V>
__global__ void channel_affine_loads(ChannelPlan plan, const T* x, const T* y, const T* gate_input, T* out,
                                     const double* a, const double* b, const double* d, const double* gate_scale,
                                     const double* gate_shift, bool relu) {
  using C = compute_type_t<T>;
  const int64_t first = first_channel(plan, blockIdx.x, threadIdx.x), group = group_of_block(plan, blockIdx.y);
  if (first < 0) return;
  C ca[V], cb[V], cd[V], scale[V], shift[V];
  lane_coefficients<C, V>(plan, group, first, a, ca);
  lane_coefficients<C, V>(plan, group, first, y ? b : nullptr, cb);
  lane_coefficients<C, V>(plan, group, first, d, cd);
  lane_coefficients<C, V>(plan, group, first, gate_input ? gate_scale : nullptr, scale);
  lane_coefficients<C, V>(plan, group, first, gate_input ? gate_shift : nullptr, shift);
  for_each_channel_load(plan, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, [&](int64_t offset, int64_t) {
    const Pack<T, V> xs = load_pack<T, V>(x, offset);
    Pack<T, V> ys = xs, gs = xs, result;
    if (y) ys = load_pack<T, V>(y, offset);
    if (gate_input) gs = load_pack<T, V>(gate_input, offset);
    for (int lane = 0; lane < V; ++lane) {
      C term = ca[lane] * load(xs.v[lane]);
      if (gate_input && !gate_keeps(scale[lane], load(gs.v[lane]), shift[lane])) term = C(0);
      C v = cd[lane] + term;
      if (y) v += cb[lane] * load(ys.v[lane]);
      if (relu) v = v <= C(0) ? C(0) : v;
      result.v[lane] = store<T>(v);
    }
    store_pack<T, V>(out, offset, result);
  });
}

// The coefficient array as a contiguous float64 array on the device (undefined stays undefined).
Array coefficients(const Array& c) { return c.defined() ? c.astype(Dtype::float64).contiguous() : c; }

const double* data_of(const Array& c) { return c.defined() ? static_cast<const double*>(c.raw_data()) : nullptr; }

// Operands of one shape, dense in one layout: themselves where they share one, else row-major copies.
struct DenseOperands {
  std::vector<Array> arrays;
  ChannelExtents extents;
};

DenseOperands dense_operands(std::vector<Array> arrays) {
  const std::optional<ChannelExtents> first = dense_channel_extents(arrays.front());
  bool shared = first.has_value();
  for (size_t k = 1; k < arrays.size() && shared; ++k) {
    const std::optional<ChannelExtents> e = dense_channel_extents(arrays[k]);
    shared = e && e->outer == first->outer && e->inner == first->inner;
  }
  if (shared) return {arrays, *first};
  for (Array& a : arrays) a = a.contiguous();
  return {arrays, *dense_channel_extents(arrays.front())};
}

// The plan for dense operands of T in `groups` groups: 16-byte loads where every operand's address
// allows them; throws ValueError for more groups than a launch takes.
template <class T>
ChannelPlan plan_for(const DenseOperands& dense, int64_t channels, int64_t groups, const char* op) {
  if (groups > kMostChannelGroups) {
    throw ValueError(cat(op, ": expected at most ", kMostChannelGroups, " groups of samples on a GPU, got ", groups));
  }
  bool aligned = true;
  for (const Array& a : dense.arrays) aligned = aligned && pack_aligned(a.raw_data());
  return plan_channels(dense.extents.outer, channels, dense.extents.inner, aligned ? kPackElements<T> : 1, groups);
}

// Calls launch.template operator()<V>(grid, block) with the plan's grid and block and V its vector: a
// 16-byte pack of T or one element.
template <class T, class Launch>
void launch_on(const ChannelPlan& plan, Launch&& launch) {
  const dim3 grid(plan.grid_x, plan.grid_y), block(plan.threads_x, plan.threads_y);
  if (plan.vector == kPackElements<T>) {
    launch.template operator()<kPackElements<T>>(grid, block);
  } else {
    launch.template operator()<1>(grid, block);
  }
}

void channel_sums_kernel(const Array& x, const Array& y, const ChannelGate& gate, int64_t groups, const Array& sums,
                         const Array& products) {
  const int index = device_of<2>({&x, &y}, "channel_sums kernel");
  const int64_t channels = x.shape()[1];
  if (x.size() == 0 || channels == 0) {
    sums.fill(0.0);
    products.fill(0.0);
    return;
  }
  const bool gated = gate.input.defined();
  const DenseOperands dense = dense_operands({x, y, gated ? gate.input : x});
  const Array gate_scale = coefficients(gate.scale), gate_shift = coefficients(gate.shift);
  DeviceGuard guard(index);
  const cudaStream_t stream = current_stream(index);
  visit_floating_dtype(x.dtype(), "channel_sums kernel", [&]<class T>() {
    const ChannelPlan plan = plan_for<T>(dense, channels, groups, "channel_sums kernel");
    const Array partial = Array::empty({2, static_cast<int64_t>(plan.grid_y), channels}, Dtype::float64, x.device());
    double* partial_sums = static_cast<double*>(partial.raw_data());
    double* partial_products = partial_sums + plan.grid_y * channels;
    const auto operand = [&](size_t k) { return static_cast<const T*>(dense.arrays[k].raw_data()); };
    launch_on<T>(plan, [&]<int V>(dim3 grid, dim3 block) {
      launch_kernel(&channel_block_sums<T, V>, grid, block, stream, plan, operand(0), operand(1),
                                                            gated ? operand(2) : nullptr, data_of(gate_scale),
                                                            data_of(gate_shift), partial_sums, partial_products);
    });
    check(cudaGetLastError(), "channel_sums kernel");
    launch_kernel(&add_partial_rows, blocks_for(groups * channels), kThreads, stream,
        partial_sums, partial_products, groups, rows_per_group(plan), channels, static_cast<double*>(sums.raw_data()),
        static_cast<double*>(products.raw_data()));
    check(cudaGetLastError(), "channel_sums kernel");
  });
}

void channel_affine_kernel(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                           const ChannelGate& gate, bool relu, int64_t groups, const Array& out) {
  const int index = device_of<2>({&x, &out}, "channel_affine kernel");
  if (out.size() == 0) return;
  const int64_t channels = x.shape()[1];
  const Array ca = coefficients(a), cb = coefficients(b), cd = coefficients(d);
  const Array gate_scale = coefficients(gate.scale), gate_shift = coefficients(gate.shift);
  const bool gated = gate.input.defined();
  // The output dense in the operands' layout: out itself when it shares it, else written back after.
  const DenseOperands dense = dense_operands({x, y.defined() ? y : x, gated ? gate.input : x, out});
  const Array& target = dense.arrays[3];
  DeviceGuard guard(index);
  const cudaStream_t stream = current_stream(index);
  visit_floating_dtype(x.dtype(), "channel_affine kernel", [&]<class T>() {
    const ChannelPlan plan = plan_for<T>(dense, channels, groups, "channel_affine kernel");
    const auto operand = [&](size_t k) { return static_cast<const T*>(dense.arrays[k].raw_data()); };
    launch_on<T>(plan, [&]<int V>(dim3 grid, dim3 block) {
      launch_kernel(&channel_affine_loads<T, V>, grid, block, stream,
          plan, operand(0), y.defined() ? operand(1) : nullptr, gated ? operand(2) : nullptr,
          static_cast<T*>(target.raw_data()), data_of(ca), y.defined() ? data_of(cb) : nullptr, data_of(cd),
          data_of(gate_scale), data_of(gate_shift), relu);
    });
  });
  check(cudaGetLastError(), "channel_affine kernel");
  if (target.raw_data() != out.raw_data()) out.assign(target);
}

}  // namespace

void register_normalization_kernels() {
  install_kernel<kernel_ops::ChannelSums>(DeviceType::cuda, "cuda", channel_sums_kernel);
  install_kernel<kernel_ops::ChannelAffine>(DeviceType::cuda, "cuda", channel_affine_kernel);
}

}  // namespace kusari::kernels::cuda
