// CUDA reductions (ops/reduction.h): over axes, and the top-k test of each row, by the rules the CPU's
// loops follow (reduction_functions.h). A reduction of many output elements over few reduced ones (a
// global average pooling's 7 x 7 windows) gives each output one thread, which walks its elements in
// order (axis_walk.h: no division), so that neighbouring threads read neighbouring memory where the
// kept axes are innermost (channels-last); where instead each output's few elements are a run of their
// own (row-major), a block stages its rows' elements in shared memory first, read in order from there;
// any other gives each output one block, whose threads take
// every blockDim-th reduced element and combine their partial results in shared memory, or, for few
// outputs of many elements (a whole-array sum), several blocks, each a run of them, whose results
// are combined in order after. Unit axes are dropped and neighbours merged; x and out may have any strides.

#include <algorithm>
#include <initializer_list>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/cuda/detail/shared_memory.cuh>
#include <kusari/kernels/detail/axis_walk.h>
#include <kusari/kernels/detail/reduction_functions.h>
#include <kusari/kernels/ops/reduction.h>

namespace kusari::kernels::cuda {
namespace {

// Where the elements of a reduction are: x's kept axes (with out's strides for them) and reduced axes.
struct ReduceLayout {
  int kept_axes = 0, reduced_axes = 0;
  int64_t kept_count = 1, reduced_count = 1;
  int64_t kept_extents[kMaxAxes], kept_strides[kMaxAxes], out_strides[kMaxAxes];
  int64_t reduced_extents[kMaxAxes], reduced_strides[kMaxAxes];
  const char* x = nullptr;
  char* out = nullptr;
};

// The offset of index i (row-major over `axes` axes of these extents, i below their product) under
// these strides; the outermost axis takes what is left of i without a division.
__device__ inline int64_t offset_of(int64_t i, int axes, const int64_t* extents, const int64_t* strides) {
  int64_t offset = 0;
  for (int d = axes - 1; d > 0; --d) {
    offset += (i % extents[d]) * strides[d];
    i /= extents[d];
  }
  return axes > 0 ? offset + i * strides[0] : 0;
}

// Axes of a reduction in row-major order, unit axes dropped and each merged into the one before it
// where every array's strides let them (the reduced elements keep their order).
struct MergedAxes {
  std::vector<int64_t> extents;
  std::vector<std::vector<int64_t>> strides;  // per array
  explicit MergedAxes(size_t arrays) : strides(arrays) {}
  void add(int64_t extent, std::initializer_list<int64_t> axis_strides) {
    if (extent == 1) return;
    bool merge = !extents.empty();
    size_t k = 0;
    for (const int64_t s : axis_strides) merge = merge && strides[k++].back() == s * extent;
    k = 0;
    if (merge) {
      extents.back() *= extent;
      for (const int64_t s : axis_strides) strides[k++].back() = s;
    } else {
      extents.push_back(extent);
      for (const int64_t s : axis_strides) strides[k++].push_back(s);
    }
  }
};

ReduceLayout reduce_layout(const Array& x, const std::vector<int64_t>& axes, const Array& out) {
  ReduceLayout layout;
  layout.x = static_cast<const char*>(x.raw_data());
  layout.out = static_cast<char*>(out.raw_data());
  MergedAxes kept(2), reduced(1);
  for (int64_t axis = 0, kept_axis = 0; axis < x.ndim(); ++axis) {
    const int64_t extent = x.shape()[axis], stride = x.strides()[static_cast<size_t>(axis)];
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) {
      reduced.add(extent, {stride});
      layout.reduced_count *= extent;
    } else {
      kept.add(extent, {stride, out.strides()[static_cast<size_t>(kept_axis++)]});
      layout.kept_count *= extent;
    }
  }
  if (kept.extents.size() > kMaxAxes || reduced.extents.size() > kMaxAxes) {
    throw ValueError(cat("reduce kernel: the CUDA kernels reduce over at most ", kMaxAxes, " axes and keep at most ",
                         kMaxAxes, " (unit axes dropped, neighbours merged), got ", reduced.extents.size(),
                         " and ", kept.extents.size(), " of ", x.shape()));
  }
  layout.kept_axes = static_cast<int>(kept.extents.size());
  layout.reduced_axes = static_cast<int>(reduced.extents.size());
  std::copy(kept.extents.begin(), kept.extents.end(), layout.kept_extents);
  std::copy(kept.strides[0].begin(), kept.strides[0].end(), layout.kept_strides);
  std::copy(kept.strides[1].begin(), kept.strides[1].end(), layout.out_strides);
  std::copy(reduced.extents.begin(), reduced.extents.end(), layout.reduced_extents);
  std::copy(reduced.strides[0].begin(), reduced.strides[0].end(), layout.reduced_strides);
  return layout;
}

inline constexpr int kReduceThreads = 256;

// Reduced elements [begin, end) of output m combined by one block, every blockDim-th element a thread,
// then in a tree in shared memory: the result for thread 0 (the block leaves `shared` free again).
template <class T, class A = Accumulator<T>>
__device__ A reduce_run(const ReduceLayout& layout, ReduceOp op, int64_t m, int64_t begin, int64_t end, A* shared) {
  const T* x = reinterpret_cast<const T*>(layout.x);
  const int64_t base = offset_of(m, layout.kept_axes, layout.kept_extents, layout.kept_strides);
  A acc = reduce_init<A>(op);
  for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x) {
    const int64_t at = base + offset_of(r, layout.reduced_axes, layout.reduced_extents, layout.reduced_strides);
    acc = reduce_combine<A>(op, acc, static_cast<A>(load(x[at])));
  }
  shared[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] = reduce_combine<A>(op, shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  const A result = shared[0];
  __syncthreads();
  return result;
}

// Where output m goes.
template <class D>
__device__ D& output_at(const ReduceLayout& layout, int64_t m) {
  return reinterpret_cast<D*>(layout.out)[offset_of(m, layout.kept_axes, layout.kept_extents, layout.out_strides)];
}

// Sum, max or min: each block reduces the output elements blockIdx.x, + gridDim.x, ...
template <class T, class D>
__global__ void reduce_elements(ReduceLayout layout, ReduceOp op) {
  KUSARI_SHARED_ARRAY(Accumulator<T>, shared, kReduceThreads);
  for (int64_t m = blockIdx.x; m < layout.kept_count; m += gridDim.x) {
    const Accumulator<T> result = reduce_run<T>(layout, op, m, 0, layout.reduced_count, shared);
    if (threadIdx.x == 0) output_at<D>(layout, m) = store<D>(result);
  }
}

// The blocks a split reduction aims at in all, and the fewest reduced elements each block reads.
inline constexpr int64_t kSplitBlocks = 1024;
inline constexpr int64_t kFewestPerPart = 16 * kReduceThreads;

// How many blocks share each output of a sum, max or min: one where the outputs are enough blocks
// themselves or their elements too few, else up to kSplitBlocks blocks in all, each with at least
// kFewestPerPart elements (a whole-array sum of 25 million elements: 1,024 blocks, not one).
int64_t parts_for(const ReduceLayout& layout) {
  if (layout.kept_count >= kSplitBlocks) return 1;
  return std::max<int64_t>(1, std::min(layout.reduced_count / kFewestPerPart, kSplitBlocks / layout.kept_count));
}

// Sum, max or min in parts: block b reduces part b % parts (a run of consecutive reduced elements) of
// output b / parts into partial[b].
template <class T>
__global__ void reduce_parts(ReduceLayout layout, ReduceOp op, int64_t parts, Accumulator<T>* partial) {
  KUSARI_SHARED_ARRAY(Accumulator<T>, shared, kReduceThreads);
  const int64_t m = blockIdx.x / parts, part = blockIdx.x % parts;
  const int64_t per_part = (layout.reduced_count + parts - 1) / parts;
  const int64_t begin = part * per_part, end = min(layout.reduced_count, begin + per_part);
  const Accumulator<T> result = reduce_run<T>(layout, op, m, begin, end, shared);
  if (threadIdx.x == 0) partial[blockIdx.x] = result;
}

// Each output's parts combined in order, one thread per output: the same result every run.
template <class T, class D>
__global__ void combine_parts(ReduceLayout layout, ReduceOp op, int64_t parts, const Accumulator<T>* partial) {
  KUSARI_FOR_EACH_ELEMENT(m, layout.kept_count) {
    Accumulator<T> acc = partial[m * parts];
    for (int64_t p = 1; p < parts; ++p) acc = reduce_combine<Accumulator<T>>(op, acc, partial[m * parts + p]);
    output_at<D>(layout, m) = store<D>(acc);
  }
}

// The most reduced elements per output, and the fewest outputs, at which each output takes one thread.
inline constexpr int64_t kMostPerThread = 1024;
inline constexpr int64_t kFewestThreadOutputs = 4096;

// Sum, max or min with one thread per output element, each walking its reduced elements in order.
template <class T, class D>
__global__ void reduce_each_by_thread(ReduceLayout layout, ReduceOp op) {
  using A = Accumulator<T>;
  const T* x = reinterpret_cast<const T*>(layout.x);
  KUSARI_FOR_EACH_ELEMENT(m, layout.kept_count) {
    const int64_t base = offset_of(m, layout.kept_axes, layout.kept_extents, layout.kept_strides);
    AxisWalk<kMaxAxes> walk(layout.reduced_axes, layout.reduced_extents, layout.reduced_strides);
    A acc = reduce_init<A>(op);
    for (int64_t r = 0; r < layout.reduced_count; ++r, walk.next()) {
      acc = reduce_combine<A>(op, acc, static_cast<A>(load(x[base + walk.offset()])));
    }
    output_at<D>(layout, m) = store<D>(acc);
  }
}

// The elements reduce_rows_staged puts in shared memory at a time, and the longest rows it takes (a
// stage then holds at least 32 rows, so that a stage's sums keep a warp's lanes busy).
inline constexpr int64_t kStagedElements = 2048;
inline constexpr int64_t kLongestStagedRow = kStagedElements / 32;

// Whether the reduction is of the rows of a dense (outputs, reduced) array, its reduced elements innermost
// and short (a row-major global average pooling's 7 x 7 planes): reduce_rows_staged's case.
bool dense_short_rows(const ReduceLayout& layout) {
  return layout.reduced_axes == 1 && layout.reduced_strides[0] == 1 && layout.kept_axes == 1 &&
         layout.kept_strides[0] == layout.reduced_count && layout.reduced_count <= kLongestStagedRow;
}

// reduce_each_by_thread for dense_short_rows: block b takes blockDim rows from b·blockDim, loads their
// elements into shared memory kStagedElements at a time (neighbouring threads, neighbouring elements),
// and each thread combines its row's elements from there in order; the same result as one thread
// walking its row in memory, whose neighbouring lanes would each read a sector of their own.
template <class T, class D>
__global__ void reduce_rows_staged(ReduceLayout layout, ReduceOp op) {
  using A = Accumulator<T>;
  KUSARI_SHARED_ARRAY(T, staged, kStagedElements);
  const T* x = reinterpret_cast<const T*>(layout.x);
  const int64_t length = layout.reduced_count, block_rows = blockDim.x;
  for (int64_t first = blockIdx.x * block_rows; first < layout.kept_count; first += gridDim.x * block_rows) {
    const int64_t rows = layout.kept_count - first < block_rows ? layout.kept_count - first : block_rows;
    const int64_t begin = first * length, end = begin + rows * length;  // the block's elements
    const int64_t row_begin = (first + threadIdx.x) * length, row_end = row_begin + length;
    A acc = reduce_init<A>(op);
    for (int64_t stage = begin; stage < end; stage += kStagedElements) {
      const int64_t stage_end = end - stage < kStagedElements ? end : stage + kStagedElements;
      for (int64_t i = stage + threadIdx.x; i < stage_end; i += blockDim.x) staged[i - stage] = x[i];
      __syncthreads();
      const int64_t from = row_begin > stage ? row_begin : stage, to = row_end < stage_end ? row_end : stage_end;
      for (int64_t i = from; i < to; ++i) acc = reduce_combine<A>(op, acc, static_cast<A>(load(staged[i - stage])));
      __syncthreads();
    }
    if (threadIdx.x < rows) output_at<D>(layout, first + threadIdx.x) = store<D>(acc);
  }
}

// Argmax or argmin over one axis, into int64.
template <class T>
__global__ void arg_reduce_elements(ReduceLayout layout, bool want_max) {
  using A = Accumulator<T>;
  KUSARI_SHARED_ARRAY(A, best_values, kReduceThreads);
  KUSARI_SHARED_ARRAY(int64_t, best_indices, kReduceThreads);
  const T* x = reinterpret_cast<const T*>(layout.x);
  for (int64_t m = blockIdx.x; m < layout.kept_count; m += gridDim.x) {
    const int64_t base = offset_of(m, layout.kept_axes, layout.kept_extents, layout.kept_strides);
    A best = A(0);
    int64_t index = -1;  // none yet
    for (int64_t r = threadIdx.x; r < layout.reduced_count; r += blockDim.x) {
      const int64_t at = base + offset_of(r, layout.reduced_axes, layout.reduced_extents, layout.reduced_strides);
      const A v = static_cast<A>(load(x[at]));
      if (index < 0 || arg_better(want_max, v, r, best, index)) {
        best = v;
        index = r;
      }
    }
    best_values[threadIdx.x] = best;
    best_indices[threadIdx.x] = index;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        const int64_t other = best_indices[threadIdx.x + half];
        if (other >= 0 &&
            (best_indices[threadIdx.x] < 0 || arg_better(want_max, best_values[threadIdx.x + half], other,
                                                         best_values[threadIdx.x], best_indices[threadIdx.x]))) {
          best_values[threadIdx.x] = best_values[threadIdx.x + half];
          best_indices[threadIdx.x] = other;
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      reinterpret_cast<int64_t*>(layout.out)[offset_of(m, layout.kept_axes, layout.kept_extents, layout.out_strides)] =
          best_indices[0];
    }
    __syncthreads();
  }
}

void reduce_kernel(ReduceOp op, const Array& x, const std::vector<int64_t>& axes, const Array& out) {
  const int index = device_of<2>({&x, &out}, "reduce kernel");
  if (out.size() == 0) return;
  DeviceGuard guard(index);
  const ReduceLayout layout = reduce_layout(x, axes, out);
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(layout.kept_count, 65535));
  const cudaStream_t stream = current_stream(index);
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw DtypeError("reduce kernel: bool arrays are reduced after a cast to an integer dtype");
    } else if (op == ReduceOp::argmax || op == ReduceOp::argmin) {
      launch_kernel(&arg_reduce_elements<T>, blocks, kReduceThreads, stream, layout, op == ReduceOp::argmax);
    } else {
      const bool by_thread =
          layout.reduced_count <= kMostPerThread && layout.kept_count >= kFewestThreadOutputs;
      const int64_t parts = by_thread ? 1 : parts_for(layout);
      visit_dtype(out.dtype(), [&]<class D>() {
        if (by_thread && dense_short_rows(layout)) {
          launch_kernel(&reduce_rows_staged<T, D>, blocks_for(layout.kept_count), kThreads, stream, layout, op);
        } else if (by_thread) {
          launch_kernel(&reduce_each_by_thread<T, D>, blocks_for(layout.kept_count), kThreads, stream, layout, op);
        } else if (parts > 1) {
          // 8-byte partial results (Accumulator<T>: double or int64) in the device's cache.
          const Array partial = Array::empty({layout.kept_count * parts}, Dtype::int64, x.device());
          auto* partials = static_cast<Accumulator<T>*>(partial.raw_data());
          launch_kernel(&reduce_parts<T>, static_cast<unsigned>(layout.kept_count * parts), kReduceThreads, stream,
              layout, op, parts, partials);
          launch_kernel(&combine_parts<T, D>, blocks_for(layout.kept_count), kThreads, stream, layout, op, parts, partials);
        } else {
          launch_kernel(&reduce_elements<T, D>, blocks, kReduceThreads, stream, layout, op);
        }
      });
    }
  });
  check(cudaGetLastError(), "reduce kernel");
}

// One thread per sample: whether fewer than k classes outrank its label (false for a label outside
// [0, classes) or a NaN score).
template <class T>
__global__ void top_k_elements(const T* x, int64_t row_stride, int64_t column_stride, int64_t samples, int64_t classes,
                               const int64_t* labels, int64_t k, bool* hits, int64_t hit_stride) {
  using C = compute_type_t<T>;
  KUSARI_FOR_EACH_ELEMENT(i, samples) {
    const T* row = x + i * row_stride;
    const int64_t label = labels[i];
    bool hit = false;
    if (label >= 0 && label < classes) {
      const C target = load(row[label * column_stride]);
      int64_t higher = 0;
      for (int64_t c = 0; c < classes && higher < k; ++c)
        higher += outranks(load(row[c * column_stride]), c, target, label);
      hit = target == target && higher < k;
    }
    hits[i * hit_stride] = hit;
  }
}

void top_k_hits_kernel(const Array& x, const Array& t, int64_t k, const Array& hits) {
  const int index = device_of<3>({&x, &t, &hits}, "top_k_hits kernel");
  const int64_t samples = x.shape()[0], classes = x.shape()[1];
  if (samples == 0) return;
  DeviceGuard guard(index);
  const int64_t hit_stride = hits.ndim() > 0 ? hits.strides()[0] : 0;
  visit_floating_dtype(x.dtype(), "top_k_hits kernel", [&]<class T>() {
    launch_kernel(&top_k_elements<T>, blocks_for(samples), kThreads, current_stream(index),
        static_cast<const T*>(x.raw_data()), x.strides()[0], x.strides()[1], samples, classes,
        static_cast<const int64_t*>(t.raw_data()), k, static_cast<bool*>(hits.raw_data()), hit_stride);
  });
  check(cudaGetLastError(), "top_k_hits kernel");
}

}  // namespace

void register_reduction_kernels() {
  install_kernel<kernel_ops::Reduce>(DeviceType::cuda, "cuda", reduce_kernel);
  install_kernel<kernel_ops::TopKHits>(DeviceType::cuda, "cuda", top_k_hits_kernel);
}

}  // namespace kusari::kernels::cuda
