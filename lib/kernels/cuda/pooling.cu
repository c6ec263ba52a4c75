// CUDA 2-D pooling over NCHW planes, row-major or channels-last (the result in the operand's order; other
// layouts are made row-major first), one thread per output element forward and one per input element
// backward, threads in memory order: each input element sums the outputs whose windows hold it in the
// order the CPU adds them, so nothing is added atomically and the results do not depend on the grid
// (their last bits may still differ from the CPU's where one compiler fuses a multiply-add that the
// other does not). Windows, and which element wins a max pooling, follow the CPU's rules
// (pooling_functions.h).

#include <limits>
#include <memory>

#include <kusari/core/kernel_table.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/detail/pooling_functions.h>
#include <kusari/kernels/ops/pooling.h>

namespace kusari::kernels::cuda {
namespace {

// The outputs [first, last) along one axis whose windows (kernel k, stride s, padding pad) hold input
// position i.
struct Covering {
  int64_t first, last;
};

__device__ inline Covering covering(int64_t i, int64_t k, int64_t s, int64_t pad, int64_t outputs) {
  // Output o holds i when o·s - pad <= i < o·s - pad + k.
  const int64_t low = i + pad - k + 1;
  const int64_t first = low <= 0 ? 0 : (low + s - 1) / s;
  const int64_t last = (i + pad) / s + 1;
  return {first, last < outputs ? last : outputs};
}

// A plane (n·C + c) and a position in it (y·W + x).
struct PlaneIndex {
  int64_t plane, at;
};

// Where one plane's elements lie: element `at` at base + at · step.
struct PlaneAddress {
  int64_t base, step;

  __device__ int64_t operator()(int64_t at) const { return base + at * step; }
};

// Where the elements of a batch of planes lie in memory: plane after plane (row-major NCHW), or
// channels-last, where plane n·C + c's element `at` of a `size`-element plane lies at (n·size + at)·C + c.
struct PlaneLayout {
  int64_t channels;
  bool channels_last;

  // The plane and position held at memory position m, in planes of `size` elements.
  __device__ PlaneIndex locate(int64_t m, int64_t size) const {
    if (!channels_last) return {m / size, m % size};
    const int64_t pixel = m / channels;
    return {pixel / size * channels + m % channels, pixel % size};
  }
  // Where plane `plane`'s elements lie, in planes of `size` elements: worked out once per plane, so that
  // a window's elements cost no division.
  __device__ PlaneAddress address(int64_t plane, int64_t size) const {
    if (!channels_last) return {plane * size, 1};
    return {plane / channels * size * channels + plane % channels, channels};
  }
};

template <class T>
__global__ void max_forward(const T* x, T* y, int32_t* winners, Planes p, Pool2dGeometry g, PlaneLayout l) {
  using C = compute_type_t<T>;
  KUSARI_FOR_EACH_ELEMENT(o, p.count * p.out_size()) {
    const PlaneIndex out = l.locate(o, p.out_size());
    const Window w = window_at(g, p, out.at / p.out_w, out.at % p.out_w);
    const PlaneAddress input = l.address(out.plane, p.in_size());
    int64_t best = -1;
    C best_value = -INFINITY;
    for (int64_t iy = w.y0; iy < w.y1; ++iy) {
      for (int64_t ix = w.x0; ix < w.x1; ++ix) {
        const C v = load(x[input(iy * p.width + ix)]);
        if (max_replaces(best, v, best_value)) {
          best = iy * p.width + ix;
          best_value = v;
        }
      }
    }
    y[o] = store<T>(best_value);
    winners[o] = static_cast<int32_t>(best);
  }
}

template <class T>
__global__ void max_scatter(const T* gy, const int32_t* winners, T* gx, Planes p, Pool2dGeometry g, PlaneLayout l) {
  using C = compute_type_t<T>;
  KUSARI_FOR_EACH_ELEMENT(i, p.count * p.in_size()) {
    const PlaneIndex in = l.locate(i, p.in_size());
    const Covering rows = covering(in.at / p.width, g.kernel_h, g.stride_h, g.pad_h, p.out_h);
    const Covering columns = covering(in.at % p.width, g.kernel_w, g.stride_w, g.pad_w, p.out_w);
    const PlaneAddress output = l.address(in.plane, p.out_size());
    C sum = 0;
    for (int64_t oy = rows.first; oy < rows.last; ++oy) {
      for (int64_t ox = columns.first; ox < columns.last; ++ox) {
        const int64_t o = output(oy * p.out_w + ox);
        if (winners[o] == in.at) sum += load(gy[o]);
      }
    }
    gx[i] = store<T>(sum);
  }
}

template <class T>
__global__ void max_gather(const T* x, const int32_t* winners, T* y, Planes p, PlaneLayout l) {
  KUSARI_FOR_EACH_ELEMENT(o, p.count * p.out_size()) {
    const int64_t plane = l.locate(o, p.out_size()).plane;
    y[o] = winners[o] >= 0 ? x[l.address(plane, p.in_size())(winners[o])] : store<T>(0.0f);
  }
}

template <class T>
__global__ void average_forward(const T* x, T* y, Planes p, Pool2dGeometry g, PlaneLayout l) {
  using C = compute_type_t<T>;
  const C scale = C(1) / static_cast<C>(g.kernel_h * g.kernel_w);
  KUSARI_FOR_EACH_ELEMENT(o, p.count * p.out_size()) {
    const PlaneIndex out = l.locate(o, p.out_size());
    const Window w = window_at(g, p, out.at / p.out_w, out.at % p.out_w);
    const PlaneAddress input = l.address(out.plane, p.in_size());
    C sum = 0;
    for (int64_t iy = w.y0; iy < w.y1; ++iy) {
      for (int64_t ix = w.x0; ix < w.x1; ++ix) sum += load(x[input(iy * p.width + ix)]);
    }
    y[o] = store<T>(sum * scale);
  }
}

template <class T>
__global__ void average_backward(const T* gy, T* gx, Planes p, Pool2dGeometry g, PlaneLayout l) {
  using C = compute_type_t<T>;
  const C scale = C(1) / static_cast<C>(g.kernel_h * g.kernel_w);
  KUSARI_FOR_EACH_ELEMENT(i, p.count * p.in_size()) {
    const PlaneIndex in = l.locate(i, p.in_size());
    const Covering rows = covering(in.at / p.width, g.kernel_h, g.stride_h, g.pad_h, p.out_h);
    const Covering columns = covering(in.at % p.width, g.kernel_w, g.stride_w, g.pad_w, p.out_w);
    const PlaneAddress output = l.address(in.plane, p.out_size());
    C sum = 0;
    for (int64_t oy = rows.first; oy < rows.last; ++oy) {
      for (int64_t ox = columns.first; ox < columns.last; ++ox) {
        sum += load(gy[output(oy * p.out_w + ox)]) * scale;
      }
    }
    gx[i] = store<T>(sum);
  }
}

// The layout of arrays of `shape` in `order` (pooling keeps its operand's order: channels-last stays
// channels-last, any other is made row-major).
PlaneLayout layout_in(MemoryOrder order, const Shape& shape) {
  return {shape[1], order == MemoryOrder::channels_last};
}

// How the CUDA backend remembers a max pooling's winners: int32 plane positions (one per output element,
// in the output's memory order) with the input's shape, that order and the geometry the backward's
// windows need.
struct DeviceWinners final : KernelState {
  DeviceWinners(Array positions, Shape input, MemoryOrder memory_order, Pool2dGeometry g)
      : indexes(std::move(positions)), input_shape(std::move(input)), order(memory_order), geometry(g) {}
  Array indexes;
  Shape input_shape;
  MemoryOrder order;
  Pool2dGeometry geometry;
};

// The CUDA record behind `state`, made on a's device; throws unless it is one.
const DeviceWinners& winners_of(const KernelState& state, const Array& a, const char* op) {
  const auto* winners = dynamic_cast<const DeviceWinners*>(&state);
  if (!winners)
    throw DeviceError(cat(op, ": expected the winners recorded by the CUDA max_pool2d, got another backend's"));
  if (!(winners->indexes.device() == a.device())) {
    throw DeviceError(
        cat(op, ": the winners were recorded on ", winners->indexes.device(), ", the operand is on ", a.device()));
  }
  return *winners;
}

// Throws unless `shape` is `expected`, the shape these winners were recorded for (`what`).
void require_shape(const Shape& shape, const Shape& expected, const char* what, const char* op) {
  if (shape != expected) throw ShapeError(cat(op, ": expected ", what, " of shape ", expected, ", got ", shape));
}

// Calls launch_kernel<T>(blocks for `elements` threads, stream) on a's device, T being a's element type.
template <class Launch>
void on_device_of(const Array& a, const char* op, int64_t elements, Launch&& launch_kernel) {
  require_device(a.device(), op);
  if (elements == 0) return;
  DeviceGuard guard(a.device().index);
  visit_floating_dtype(a.dtype(), op, [&]<class T>() {
    launch_kernel.template operator()<T>(blocks_for(elements), current_stream(a.device().index));
  });
  check(cudaGetLastError(), op);
}

// An operand's data as T.
template <class T>
const T* in(const Array& a) {
  return static_cast<const T*>(a.raw_data());
}
// A result's data as T.
template <class T>
T* out(const Array& a) {
  return static_cast<T*>(a.raw_data());
}

MaxPool2dResult max_pool2d(const Array& x, const Pool2dGeometry& g, const Shape& y_shape) {
  if (x.shape()[2] * x.shape()[3] > std::numeric_limits<int32_t>::max()) {
    throw ShapeError(cat("max_pooling_2d: expected an (H, W) plane of at most 2^31 - 1 elements, got x ", x.shape()));
  }
  const MemoryOrder order = memory_order_of(x);
  const Array input = in_order(x, order);
  Array y = empty_in_order(y_shape, order, x.dtype(), x.device());
  Array indexes = empty_in_order(y_shape, order, Dtype::int32, x.device());
  const Planes p(x.shape(), y_shape);
  const PlaneLayout l = layout_in(order, y_shape);
  on_device_of(x, "max_pool2d", y.size(), [&]<class T>(unsigned blocks, cudaStream_t stream) {
    max_forward<T><<<blocks, kThreads, 0, stream>>>(in<T>(input), out<T>(y), out<int32_t>(indexes), p, g, l);
  });
  return {y, std::make_shared<DeviceWinners>(indexes, x.shape(), order, g)};
}

Array max_pool2d_scatter(const Array& gy, const KernelState& state, const Shape& gx_shape) {
  const char* op = "max_pool2d_scatter";
  const DeviceWinners& winners = winners_of(state, gy, op);
  require_shape(gy.shape(), winners.indexes.shape(), "a gradient of the pooled output's shape", op);
  require_shape(gx_shape, winners.input_shape, "a result of the pooled input's shape", op);
  const Array g = in_order(gy, winners.order);
  Array gx = empty_in_order(gx_shape, winners.order, gy.dtype(), gy.device());
  const Planes p(gx_shape, gy.shape());
  const PlaneLayout l = layout_in(winners.order, gx_shape);
  on_device_of(gy, op, gx.size(), [&]<class T>(unsigned blocks, cudaStream_t stream) {
    max_scatter<T><<<blocks, kThreads, 0, stream>>>(in<T>(g), in<int32_t>(winners.indexes), out<T>(gx), p,
                                                    winners.geometry, l);
  });
  return gx;
}

Array max_pool2d_gather(const Array& x, const KernelState& state) {
  const char* op = "max_pool2d_gather";
  const DeviceWinners& winners = winners_of(state, x, op);
  require_shape(x.shape(), winners.input_shape, "an operand of the pooled input's shape", op);
  const Array input = in_order(x, winners.order);
  Array y = empty_in_order(winners.indexes.shape(), winners.order, x.dtype(), x.device());
  const Planes p(x.shape(), y.shape());
  const PlaneLayout l = layout_in(winners.order, x.shape());
  on_device_of(x, op, y.size(), [&]<class T>(unsigned blocks, cudaStream_t stream) {
    max_gather<T><<<blocks, kThreads, 0, stream>>>(in<T>(input), in<int32_t>(winners.indexes), out<T>(y), p, l);
  });
  return y;
}

Array average_pool2d(const Array& x, const Pool2dGeometry& g, const Shape& y_shape) {
  const MemoryOrder order = memory_order_of(x);
  const Array input = in_order(x, order);
  Array y = empty_in_order(y_shape, order, x.dtype(), x.device());
  const Planes p(x.shape(), y_shape);
  const PlaneLayout l = layout_in(order, y_shape);
  on_device_of(x, "average_pool2d", y.size(), [&]<class T>(unsigned blocks, cudaStream_t stream) {
    average_forward<T><<<blocks, kThreads, 0, stream>>>(in<T>(input), out<T>(y), p, g, l);
  });
  return y;
}

Array average_pool2d_backward(const Array& gy, const Pool2dGeometry& g, const Shape& gx_shape) {
  const MemoryOrder order = memory_order_of(gy);
  const Array grad = in_order(gy, order);
  Array gx = empty_in_order(gx_shape, order, gy.dtype(), gy.device());
  const Planes p(gx_shape, gy.shape());
  const PlaneLayout l = layout_in(order, gx_shape);
  on_device_of(gy, "average_pool2d_backward", gx.size(), [&]<class T>(unsigned blocks, cudaStream_t stream) {
    average_backward<T><<<blocks, kThreads, 0, stream>>>(in<T>(grad), out<T>(gx), p, g, l);
  });
  return gx;
}

}  // namespace

void register_pooling_kernels() {
  install_kernel<kernel_ops::MaxPool2d>(DeviceType::cuda, "cuda", max_pool2d);
  install_kernel<kernel_ops::MaxPool2dScatter>(DeviceType::cuda, "cuda", max_pool2d_scatter);
  install_kernel<kernel_ops::MaxPool2dGather>(DeviceType::cuda, "cuda", max_pool2d_gather);
  install_kernel<kernel_ops::AveragePool2d>(DeviceType::cuda, "cuda", average_pool2d);
  install_kernel<kernel_ops::AveragePool2dBackward>(DeviceType::cuda, "cuda", average_pool2d_backward);
}

}  // namespace kusari::kernels::cuda
