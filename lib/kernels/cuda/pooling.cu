// CUDA 2-D pooling over NCHW planes, row-major or channels-last (the result in the operand's order; other
// layouts are made row-major first), one thread per output element forward and one per input element
// backward, threads in memory order: each input element sums the outputs whose windows hold it in the
// order the CPU adds them, so nothing is added atomically and the results do not depend on the grid
// (their last bits may still differ from the CPU's where one compiler fuses a multiply-add that the
// other does not). Windows, and which element wins a max pooling, follow the CPU's rules
// (pooling_functions.h). A thread finds its plane, place, row and column and the outputs covering it
// with divisions by divisors fixed at launch (pooling_positions.h): a multiply-high and a shift where
// the launch's positions fit 32 bits, 64-bit division otherwise (some seventy instructions each, ten of
// them per element in the backward).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>

#include <kusari/core/kernel_table.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/detail/pooling_positions.h>
#include <kusari/kernels/detail/pooling_functions.h>
#include <kusari/kernels/ops/pooling.h>

namespace kusari::kernels::cuda {
namespace {

template <class T, class Div>
__global__ void max_forward(const T* x, T* y, int32_t* winners, Planes p, Pool2dGeometry g, Dividers<Div> d) {
  using C = compute_type_t<T>;
  KUSARI_FOR_EACH_ELEMENT(o, p.count * p.out_size()) {
    const PlaneIndex out = locate(d, o);
    int64_t oy = 0, ox = 0;
    coordinates(d, out.at, oy, ox);
    const Window w = window_at(g, p, oy, ox);
    const PlaneAddress input = address(d, out.plane, p.in_size());
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

template <class T, class Div>
__global__ void max_scatter(const T* gy, const int32_t* winners, T* gx, Planes p, Pool2dGeometry g,
                            Dividers<Div> d) {
  using C = compute_type_t<T>;
  KUSARI_FOR_EACH_ELEMENT(i, p.count * p.in_size()) {
    const InputCover c = cover_of(d, i, p, g);
    C sum = 0;
    for (int64_t oy = c.rows.first; oy < c.rows.last; ++oy) {
      for (int64_t ox = c.columns.first; ox < c.columns.last; ++ox) {
        const int64_t o = c.output(oy * p.out_w + ox);
        if (winners[o] == c.in.at) sum += load(gy[o]);
      }
    }
    gx[i] = store<T>(sum);
  }
}

template <class T, class Div>
__global__ void max_gather(const T* x, const int32_t* winners, T* y, Planes p, Dividers<Div> d) {
  KUSARI_FOR_EACH_ELEMENT(o, p.count * p.out_size()) {
    const int64_t plane = locate(d, o).plane;
    y[o] = winners[o] >= 0 ? x[address(d, plane, p.in_size())(winners[o])] : store<T>(0.0f);
  }
}

template <class T, class Div>
__global__ void average_forward(const T* x, T* y, Planes p, Pool2dGeometry g, Dividers<Div> d) {
  using C = compute_type_t<T>;
  const C scale = C(1) / static_cast<C>(g.kernel_h * g.kernel_w);
  KUSARI_FOR_EACH_ELEMENT(o, p.count * p.out_size()) {
    const PlaneIndex out = locate(d, o);
    int64_t oy = 0, ox = 0;
    coordinates(d, out.at, oy, ox);
    const Window w = window_at(g, p, oy, ox);
    const PlaneAddress input = address(d, out.plane, p.in_size());
    C sum = 0;
    for (int64_t iy = w.y0; iy < w.y1; ++iy) {
      for (int64_t ix = w.x0; ix < w.x1; ++ix) sum += load(x[input(iy * p.width + ix)]);
    }
    y[o] = store<T>(sum * scale);
  }
}

template <class T, class Div>
__global__ void average_backward(const T* gy, T* gx, Planes p, Pool2dGeometry g, Dividers<Div> d) {
  using C = compute_type_t<T>;
  const C scale = C(1) / static_cast<C>(g.kernel_h * g.kernel_w);
  KUSARI_FOR_EACH_ELEMENT(i, p.count * p.in_size()) {
    const InputCover c = cover_of(d, i, p, g);
    C sum = 0;
    for (int64_t oy = c.rows.first; oy < c.rows.last; ++oy) {
      for (int64_t ox = c.columns.first; ox < c.columns.last; ++ox) {
        sum += load(gy[c.output(oy * p.out_w + ox)]) * scale;
      }
    }
    gx[i] = store<T>(sum);
  }
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

// on_device_of for a pooling kernel whose threads run over the `elements` positions of planes of `rows`
// x `columns` (arrays of a's channels, in `order`; the other operand has `other_elements`): calls
// launch_kernel<T>(dividers, blocks, stream) with FastDivider's dividers where every position of both
// and every padded position fits 32 bits (fits_fast_pooling), 64-bit division's otherwise.
template <class Launch>
void on_device_with_dividers(const Array& a, const char* op, int64_t elements, int64_t other_elements, int64_t rows,
                             int64_t columns, const Pool2dGeometry& g, MemoryOrder order, Launch&& launch_kernel) {
  const int64_t channels = a.shape()[1];
  const bool channels_last = order == MemoryOrder::channels_last;
  on_device_of(a, op, elements, [&]<class T>(unsigned blocks, cudaStream_t stream) {
    if (fits_fast_pooling(std::max(elements, other_elements), rows, columns, g)) {
      launch_kernel.template operator()<T>(
          dividers_for<FastDivider>(channels, rows, columns, g, channels_last), blocks, stream);
    } else {
      launch_kernel.template operator()<T>(
          dividers_for<WideDivider>(channels, rows, columns, g, channels_last), blocks, stream);
    }
  });
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
  on_device_with_dividers(x, "max_pool2d", y.size(), x.size(), p.out_h, p.out_w, g, order,
                          [&]<class T>(auto d, unsigned blocks, cudaStream_t stream) {
                            launch_kernel(&max_forward<T, typename decltype(d)::divider>, blocks, kThreads, stream,
                                in<T>(input), out<T>(y), out<int32_t>(indexes), p, g, d);
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
  on_device_with_dividers(gy, op, gx.size(), gy.size(), p.height, p.width, winners.geometry, winners.order,
                          [&]<class T>(auto d, unsigned blocks, cudaStream_t stream) {
                            launch_kernel(&max_scatter<T, typename decltype(d)::divider>, blocks, kThreads, stream,
                                in<T>(g), in<int32_t>(winners.indexes), out<T>(gx), p, winners.geometry, d);
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
  on_device_with_dividers(x, op, y.size(), x.size(), p.out_h, p.out_w, winners.geometry, winners.order,
                          [&]<class T>(auto d, unsigned blocks, cudaStream_t stream) {
                            launch_kernel(&max_gather<T, typename decltype(d)::divider>, blocks, kThreads, stream,
                                in<T>(input), in<int32_t>(winners.indexes), out<T>(y), p, d);
                          });
  return y;
}

Array average_pool2d(const Array& x, const Pool2dGeometry& g, const Shape& y_shape) {
  const MemoryOrder order = memory_order_of(x);
  const Array input = in_order(x, order);
  Array y = empty_in_order(y_shape, order, x.dtype(), x.device());
  const Planes p(x.shape(), y_shape);
  on_device_with_dividers(x, "average_pool2d", y.size(), x.size(), p.out_h, p.out_w, g, order,
                          [&]<class T>(auto d, unsigned blocks, cudaStream_t stream) {
                            launch_kernel(&average_forward<T, typename decltype(d)::divider>, blocks, kThreads, stream, in<T>(input), out<T>(y), p, g, d);
                          });
  return y;
}

Array average_pool2d_backward(const Array& gy, const Pool2dGeometry& g, const Shape& gx_shape) {
  const MemoryOrder order = memory_order_of(gy);
  const Array grad = in_order(gy, order);
  Array gx = empty_in_order(gx_shape, order, gy.dtype(), gy.device());
  const Planes p(gx_shape, gy.shape());
  on_device_with_dividers(gy, "average_pool2d_backward", gx.size(), gy.size(), p.height, p.width, g, order,
                          [&]<class T>(auto d, unsigned blocks, cudaStream_t stream) {
                            launch_kernel(&average_backward<T, typename decltype(d)::divider>, blocks, kThreads, stream, in<T>(grad), out<T>(gx), p, g, d);
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
