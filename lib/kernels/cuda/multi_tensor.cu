// CUDA multi-tensor optimizer kernels: the momentum step of every parameter of a group in one launch,
// the squared norms of many arrays in two (per-block sums, then each array's blocks added in order:
// the same bits on every run), the conversions of many pairs of arrays (a loss scale divided out on the
// way) and weight decay's g += rate·w over many pairs in one launch per pair of dtypes, and whether
// many arrays are all finite in one launch per dtype. Each block takes one chunk of one tensor; the
// table of tensors and chunks goes to the device with the launch (an asynchronous copy, no
// synchronization).

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>
#include <type_traits>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/cuda/detail/shared_memory.cuh>
#include <kusari/kernels/detail/elementwise_functions.h>
#include <kusari/kernels/ops/optimizer.h>
#include <kusari/kernels/optimizer_routines.h>

namespace kusari::kernels::cuda {
namespace {

// The elements one block takes.
constexpr int64_t kChunkElements = int64_t{1} << 16;

// Elements [begin, end) of tensor `tensor`.
struct TensorChunk {
  int64_t tensor, begin, end;
};

// One parameter's arrays and coefficients for the momentum step.
struct StepTensor {
  void* w;
  void* v;
  const void* g;
  double momentum, weight_decay;
};

// The chunks covering tensors of these sizes, and the first chunk of each tensor (one more entry: the
// total).
struct Chunks {
  std::vector<TensorChunk> chunks;
  std::vector<int64_t> first;
};

Chunks chunks_of(const std::vector<int64_t>& sizes) {
  Chunks c;
  for (size_t k = 0; k < sizes.size(); ++k) {
    c.first.push_back(static_cast<int64_t>(c.chunks.size()));
    for (int64_t begin = 0; begin < sizes[k]; begin += kChunkElements) {
      c.chunks.push_back({static_cast<int64_t>(k), begin, std::min(sizes[k], begin + kChunkElements)});
    }
  }
  c.first.push_back(static_cast<int64_t>(c.chunks.size()));
  return c;
}

// Arrays as a kernel's table takes them: dense (each array itself, or its contiguous copy, kept alive
// here until the launch is queued), their data and their sizes.
struct DenseTensors {
  std::vector<Array> arrays;
  std::vector<const void*> bases;
  std::vector<int64_t> sizes;
};

DenseTensors dense_tensors(const std::vector<Array>& arrays) {
  DenseTensors d;
  for (const Array& a : arrays) {
    d.arrays.push_back(a.contiguous());
    d.bases.push_back(d.arrays.back().raw_data());
    d.sizes.push_back(a.size());
  }
  return d;
}

// A table of plain records on `device`: the bytes of each part one after another (each part's size a
// multiple of 8), copied there asynchronously.
class DeviceTable {
 public:
  template <class T>
  size_t add(const std::vector<T>& part) {
    static_assert(sizeof(T) % 8 == 0 && std::is_trivially_copyable_v<T>);
    const size_t at = bytes_.size();
    bytes_.resize(at + part.size() * sizeof(T));
    if (!part.empty()) std::memcpy(bytes_.data() + at, part.data(), part.size() * sizeof(T));
    return at;
  }
  // Copies the table to the device; the result keeps it alive (its release waits for the stream).
  Array to(const Device& device) const {
    const Array host = Array::empty({static_cast<int64_t>(std::max<size_t>(bytes_.size(), 1))}, Dtype::uint8,
                                   Device::cpu());
    std::memcpy(host.host_data(), bytes_.data(), bytes_.size());
    return host.to(device);
  }

 private:
  std::vector<unsigned char> bytes_;
};

// The part at byte `at` of a table on the device.
template <class T>
const T* part_of(const Array& table, size_t at) {
  return reinterpret_cast<const T*>(static_cast<const unsigned char*>(table.raw_data()) + at);
}

// An operation of two values that two kernels would compute apart.
enum class Apart { product, sum };

// x·y or x + y, rounded once and never fused into a multiply-add.
template <Apart op, class C>
__device__ inline C unfused(C x, C y) {
  if constexpr (std::is_same_v<C, double>) {
    return op == Apart::product ? __dmul_rn(x, y) : __dadd_rn(x, y);
  } else {
    return op == Apart::product ? __fmul_rn(x, y) : __fadd_rn(x, y);
  }
}

// g + w·decay in T, each operation rounded to T, as with_weight_decay's routines make it.
template <class T, class C>
__device__ inline C decayed_gradient(C g, C weight, C decay) {
  return load(store<T>(unfused<Apart::sum>(g, load(store<T>(unfused<Apart::product>(weight, decay))))));
}

// The momentum step of each chunk's elements as momentum_steps_one_by_one's routines compute it: the
// gradient with weight decay (g + w·rate, the rate a T scalar, each operation rounded to T), then the
// step form as momentum_step computes it, or the descent form (v·m and u·r each rounded to T, as their
// sum, then w − v).
template <class T>
__global__ void momentum_step_chunks(const StepTensor* tensors, const TensorChunk* chunks, const double* rates,
                                     bool descent) {
  using C = compute_type_t<T>;
  const TensorChunk chunk = chunks[blockIdx.x];
  const StepTensor t = tensors[chunk.tensor];
  const C momentum = static_cast<C>(t.momentum), decay = load(store<T>(t.weight_decay));
  const C rate = static_cast<C>(rates[chunk.tensor]);
  const C momentum_t = load(store<T>(t.momentum)), rate_t = load(store<T>(rates[chunk.tensor]));  // T scalars
  T* w = static_cast<T*>(t.w);
  T* v = static_cast<T*>(t.v);
  const T* g = static_cast<const T*>(t.g);
  for (int64_t i = chunk.begin + threadIdx.x; i < chunk.end; i += blockDim.x) {
    const C weight = load(w[i]);
    const C u = t.weight_decay == 0 ? load(g[i]) : decayed_gradient<T>(load(g[i]), weight, decay);
    if (descent) {
      const C kept = load(store<T>(unfused<Apart::product>(load(v[i]), momentum_t)));
      const C step = load(store<T>(unfused<Apart::product>(u, rate_t)));
      const T velocity = store<T>(unfused<Apart::sum>(kept, step));
      v[i] = velocity;
      w[i] = store<T>(weight - load(velocity));
    } else {
      momentum_step_element(w[i], v[i], u, momentum, rate);
    }
  }
}

void momentum_steps_kernel(const MomentumTensors& t) {
  const Device device = t.w.front().device();
  const int index = device.index;
  require_device(device, "momentum_steps kernel");
  for (const std::vector<Array>* group : {&t.w, &t.v, &t.g}) {
    for (const Array& a : *group) {
      if (!a.is_contiguous()) return ops::detail::momentum_steps_one_by_one(t);  // per tensor, on the device
    }
  }
  std::vector<StepTensor> tensors;
  std::vector<int64_t> sizes;
  for (size_t k = 0; k < t.w.size(); ++k) {
    tensors.push_back({t.w[k].raw_data(), t.v[k].raw_data(), t.g[k].raw_data(), t.momentum[k], t.weight_decay[k]});
    sizes.push_back(t.w[k].size());
  }
  const Chunks chunks = chunks_of(sizes);
  if (chunks.chunks.empty()) return;
  DeviceTable table;
  const size_t tensors_at = table.add(tensors), chunks_at = table.add(chunks.chunks);
  const Array on_device = table.to(device);
  const Array rates = t.rate.contiguous();
  DeviceGuard guard(index);
  visit_floating_dtype(t.w.front().dtype(), "momentum_steps kernel", [&]<class T>() {
    launch_kernel(&momentum_step_chunks<T>, static_cast<unsigned>(chunks.chunks.size()), kThreads,
                  current_stream(index),
        part_of<StepTensor>(on_device, tensors_at), part_of<TensorChunk>(on_device, chunks_at),
        static_cast<const double*>(rates.raw_data()), t.form == VelocityForm::descent);
  });
  check(cudaGetLastError(), "momentum_steps kernel");
}

// Block b's sum of squares of its chunk, into partial[b].
template <class T, class A>
__global__ void chunk_square_sums(const void* const* arrays, const TensorChunk* chunks, A* partial) {
  KUSARI_SHARED_ARRAY(A, sums, kThreads);
  const TensorChunk chunk = chunks[blockIdx.x];
  const T* a = static_cast<const T*>(arrays[chunk.tensor]);
  A sum = 0;
  for (int64_t i = chunk.begin + threadIdx.x; i < chunk.end; i += blockDim.x) {
    const A x = static_cast<A>(load(a[i]));
    sum += x * x;
  }
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}

// out[k]: the partial sums of array k's chunks, added in order.
template <class A>
__global__ void add_chunk_sums(const A* partial, const int64_t* first, int64_t arrays, A* out) {
  KUSARI_FOR_EACH_ELEMENT(k, arrays) {
    A sum = 0;
    for (int64_t c = first[k]; c < first[k + 1]; ++c) sum += partial[c];
    out[k] = sum;
  }
}

void squared_norms_kernel(const std::vector<Array>& arrays, const Array& out) {
  const Device device = out.device();
  const int index = device.index;
  require_device(device, "squared_norms kernel");
  const DenseTensors dense = dense_tensors(arrays);
  const Chunks chunks = chunks_of(dense.sizes);
  DeviceTable table;
  const size_t bases_at = table.add(dense.bases), first_at = table.add(chunks.first), chunks_at = table.add(chunks.chunks);
  const Array on_device = table.to(device);
  const auto count = static_cast<int64_t>(arrays.size());
  DeviceGuard guard(index);
  const cudaStream_t stream = current_stream(index);
  visit_floating_dtype(arrays.front().dtype(), "squared_norms kernel", [&]<class T>() {
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const Array partial = Array::empty({std::max<int64_t>(1, static_cast<int64_t>(chunks.chunks.size()))},
                                       out.dtype(), device);
    if (!chunks.chunks.empty()) {
      launch_kernel(&chunk_square_sums<T, A>, static_cast<unsigned>(chunks.chunks.size()), kThreads, stream,
          part_of<const void*>(on_device, bases_at), part_of<TensorChunk>(on_device, chunks_at),
          static_cast<A*>(partial.raw_data()));
    }
    launch_kernel(&add_chunk_sums<A>, blocks_for(count), kThreads, stream, static_cast<const A*>(partial.raw_data()),
                                                                   part_of<int64_t>(on_device, first_at), count,
                                                                   static_cast<A*>(out.raw_data()));
  });
  check(cudaGetLastError(), "squared_norms kernel");
}

// Block b converts its chunk of pair chunk.tensor: targets[k][i] = sources[k][i], divided by `divisor`
// (a D, divided in D's compute type) where `divide`.
template <class S, class D>
__global__ void convert_chunks(const void* const* sources, void* const* targets, const TensorChunk* chunks,
                               bool divide, D divisor) {
  const TensorChunk chunk = chunks[blockIdx.x];
  const S* from = static_cast<const S*>(sources[chunk.tensor]);
  D* to = static_cast<D*>(targets[chunk.tensor]);
  const device_compute_t<D> by = load(divisor);
  for (int64_t i = chunk.begin + threadIdx.x; i < chunk.end; i += blockDim.x) {
    const D value = convert<D>(from[i]);
    to[i] = divide ? store<D>(elementwise::Div<device_compute_t<D>>{}(load(value), by)) : value;
  }
}

// Runs `launch<S, D>(from table, to table, chunks)` once for each pair of dtypes among the contiguous pairs
// of sources and targets on their device; `one_by_one` takes the other pairs.
template <class Launch, class OneByOne>
void launch_pairs(const std::vector<Array>& sources, const std::vector<Array>& targets, const char* op,
                  Launch launch, OneByOne one_by_one) {
  const Device device = sources.front().device();
  const int index = device.index;
  require_device(device, op);
  std::map<std::pair<Dtype, Dtype>, std::vector<size_t>> by_dtypes;
  for (size_t k = 0; k < sources.size(); ++k) {
    if (sources[k].is_contiguous() && targets[k].is_contiguous()) {
      by_dtypes[{sources[k].dtype(), targets[k].dtype()}].push_back(k);
    } else {
      one_by_one({sources[k]}, {targets[k]});
    }
  }
  DeviceGuard guard(index);
  for (const auto& [dtypes, pairs] : by_dtypes) {
    std::vector<const void*> from;
    std::vector<void*> to;
    std::vector<int64_t> sizes;
    for (const size_t k : pairs) {
      from.push_back(sources[k].raw_data());
      to.push_back(targets[k].raw_data());
      sizes.push_back(sources[k].size());
    }
    const Chunks chunks = chunks_of(sizes);
    if (chunks.chunks.empty()) continue;
    DeviceTable table;
    const size_t from_at = table.add(from), to_at = table.add(to), chunks_at = table.add(chunks.chunks);
    const Array on_device = table.to(device);
    visit_floating_dtype(dtypes.first, op, [&]<class S>() {
      visit_floating_dtype(dtypes.second, op, [&]<class D>() {
        launch.template operator()<S, D>(static_cast<unsigned>(chunks.chunks.size()), current_stream(index),
                                         part_of<const void*>(on_device, from_at), part_of<void*>(on_device, to_at),
                                         part_of<TensorChunk>(on_device, chunks_at));
      });
    });
  }
  check(cudaGetLastError(), op);
}

void copy_tensors_kernel(const std::vector<Array>& sources, const std::vector<Array>& destinations, double divisor) {
  launch_pairs(
      sources, destinations, "copy_tensors kernel",
      [divisor]<class S, class D>(unsigned blocks, cudaStream_t stream, const void* const* from, void* const* to,
                                  const TensorChunk* chunks) {
        launch_kernel(&convert_chunks<S, D>, blocks, kThreads, stream, from, to, chunks, divisor != 1,
                      static_cast<D>(divisor));
      },
      [divisor](const std::vector<Array>& from, const std::vector<Array>& to) {
        ops::detail::copy_tensors_one_by_one(from, to, divisor);
      });
}

// Block b adds its chunk of pair chunk.tensor: targets[k][i] += sources[k][i] (as a D) · factor, the
// product and the sum each rounded to D, never fused (decayed_gradient).
template <class S, class D>
__global__ void add_scaled_chunks(const void* const* sources, void* const* targets, const TensorChunk* chunks,
                                  D factor) {
  using C = device_compute_t<D>;
  const TensorChunk chunk = chunks[blockIdx.x];
  const S* from = static_cast<const S*>(sources[chunk.tensor]);
  D* to = static_cast<D*>(targets[chunk.tensor]);
  const C by = load(factor);
  for (int64_t i = chunk.begin + threadIdx.x; i < chunk.end; i += blockDim.x) {
    to[i] = store<D>(decayed_gradient<D, C>(load(to[i]), load(convert<D>(from[i])), by));
  }
}

void add_scaled_tensors_kernel(const std::vector<Array>& sources, const std::vector<Array>& targets, double factor) {
  launch_pairs(
      sources, targets, "add_scaled_tensors kernel",
      [factor]<class S, class D>(unsigned blocks, cudaStream_t stream, const void* const* from, void* const* to,
                                 const TensorChunk* chunks) {
        launch_kernel(&add_scaled_chunks<S, D>, blocks, kThreads, stream, from, to, chunks, static_cast<D>(factor));
      },
      [factor](const std::vector<Array>& from, const std::vector<Array>& to) {
        ops::detail::add_scaled_tensors_one_by_one(from, to, factor);
      });
}

// Block b scans its chunk of array chunk.tensor: an element whose exponent is all ones clears *finite
// (every writer writes the same false, so their order does not matter).
template <class T>
__global__ void scan_finite_chunks(const void* const* bases, const TensorChunk* chunks, bool* finite) {
  const TensorChunk chunk = chunks[blockIdx.x];
  const auto* bits = static_cast<const bits_t<T>*>(bases[chunk.tensor]);
  bool non_finite = false;
  for (int64_t i = chunk.begin + threadIdx.x; i < chunk.end; i += blockDim.x) {
    non_finite |= non_finite_bits<T>(bits[i]);
  }
  if (non_finite) *finite = false;
}

void all_finite_kernel(const std::vector<Array>& arrays, const Array& out) {
  const Device device = out.device();
  const int index = device.index;
  require_device(device, "all_finite kernel");
  DeviceGuard guard(index);
  const cudaStream_t stream = current_stream(index);
  check(cudaMemsetAsync(out.raw_data(), 1, 1, stream), "cudaMemsetAsync");
  std::map<Dtype, std::vector<Array>> by_dtype;
  for (const Array& a : arrays) by_dtype[a.dtype()].push_back(a);
  for (const auto& [dtype, group] : by_dtype) {
    const DenseTensors dense = dense_tensors(group);
    const Chunks chunks = chunks_of(dense.sizes);
    if (chunks.chunks.empty()) continue;
    DeviceTable table;
    const size_t bases_at = table.add(dense.bases), chunks_at = table.add(chunks.chunks);
    const Array on_device = table.to(device);
    visit_floating_dtype(dtype, "all_finite kernel", [&]<class T>() {
      launch_kernel(&scan_finite_chunks<T>, static_cast<unsigned>(chunks.chunks.size()), kThreads, stream,
          part_of<const void*>(on_device, bases_at), part_of<TensorChunk>(on_device, chunks_at),
          static_cast<bool*>(out.raw_data()));
    });
  }
  check(cudaGetLastError(), "all_finite kernel");
}

}  // namespace

void register_multi_tensor_kernels() {
  install_kernel<kernel_ops::MomentumSteps>(DeviceType::cuda, "cuda", momentum_steps_kernel);
  install_kernel<kernel_ops::SquaredNorms>(DeviceType::cuda, "cuda", squared_norms_kernel);
  install_kernel<kernel_ops::CopyTensors>(DeviceType::cuda, "cuda", copy_tensors_kernel);
  install_kernel<kernel_ops::AddScaledTensors>(DeviceType::cuda, "cuda", add_scaled_tensors_kernel);
  install_kernel<kernel_ops::AllFinite>(DeviceType::cuda, "cuda", all_finite_kernel);
}

}  // namespace kusari::kernels::cuda
