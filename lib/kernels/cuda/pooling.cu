// CUDA 2-D pooling over NCHW planes, row-major or channels-last (the result in the operand's order; other
// layouts are made row-major first), threads over the output forward and over the input backward, in
// memory order: each input element sums the outputs whose windows hold it in the order the CPU adds
// them, so nothing is added atomically and the results do not depend on the grid (their last bits may
// still differ from the CPU's where one compiler fuses a multiply-add that the other does not). A thread
// of a channels-last launch takes the channels of one 16-byte access at its place (8 halves, 4 floats,
// 2 doubles) where the channels are a multiple of them, so that each window element is one 16-byte load
// and its position arithmetic serves them all; a row-major thread takes one element. A max pooling keeps
// each winner as its offset in its window (a byte for most windows). Windows, and which element wins a
// max pooling, follow the CPU's rules (pooling_functions.h). A thread finds its plane, place, row and
// column and the outputs covering it with divisions by divisors fixed at launch (pooling_positions.h): a
// multiply-high and a shift where the launch's positions fit 32 bits, 64-bit division otherwise.

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>

#include <kusari/core/kernel_table.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/packs.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/detail/pooling_positions.h>
#include <kusari/kernels/detail/pooling_functions.h>
#include <kusari/kernels/ops/pooling.h>

namespace kusari::kernels::cuda {
namespace {

// A max pooling's winner of one channel at one output is its offset in the window's part inside the
// plane, row-major (below the plane's size, which max_pool2d bounds by 2^31 - 1), as W: uint8 for windows
// of at most 255 elements (a quarter of int32's bytes, read back by the backward), int32 beyond; all bits
// set where the window lies wholly in padding.
template <class W>
inline constexpr W kNoWinner = static_cast<W>(-1);

// The winners' type of windows of `elements`.
Dtype winners_dtype(int64_t elements) { return elements <= 255 ? Dtype::uint8 : Dtype::int32; }

// The offset of input (iy, ix) in window w.
__device__ inline int64_t window_offset(const Window& w, int64_t iy, int64_t ix) {
  return (iy - w.y0) * (w.x1 - w.x0) + (ix - w.x0);
}

// V elements of E from element `offset` of p into v, 16 bytes (or all V) an access.
template <class E, int V>
__device__ inline void load_elements(const E* p, int64_t offset, E (&v)[V]) {
  constexpr int N = V < kPackElements<E> ? V : kPackElements<E>;
  for (int k = 0; k < V; k += N) {
    const Pack<E, N> pack = load_pack<E, N>(p, offset + k);
    for (int j = 0; j < N; ++j) v[k + j] = pack.v[j];
  }
}

// Stores V elements of E at element `offset` of p, 16 bytes (or all V) an access.
template <class E, int V>
__device__ inline void store_elements(E* p, int64_t offset, const E (&v)[V]) {
  constexpr int N = V < kPackElements<E> ? V : kPackElements<E>;
  for (int k = 0; k < V; k += N) {
    Pack<E, N> pack;
    for (int j = 0; j < N; ++j) pack.v[j] = v[k + j];
    store_pack<E, N>(p, offset + k, pack);
  }
}

// Stores V values computed in C, each rounded to T once, at element `offset` of p.
template <class T, int V, class C>
__device__ inline void store_values(T* p, int64_t offset, const C (&values)[V]) {
  T rounded[V];
  for (int j = 0; j < V; ++j) rounded[j] = store<T>(values[j]);
  store_elements<T, V>(p, offset, rounded);
}

// Each thread takes V consecutive elements in memory order (elements_per_thread: V channels of one
// place of a channels-last array, or one element), so its position t·V is the first of V planes at one
// place.

template <class T, int V, class W, class Div>
__global__ void max_forward(const T* x, T* y, W* winners, Planes p, Pool2dGeometry g, Dividers<Div> d) {
  using C = compute_type_t<T>;
  KUSARI_FOR_EACH_ELEMENT(t, p.count * p.out_size() / V) {
    const int64_t o = t * V;
    const OutputWindow place = window_of(d, o, p, g);
    const Window& w = place.window;
    const PlaneAddress& input = place.input;
    int64_t best[V];
    C best_value[V];
    for (int j = 0; j < V; ++j) {
      best[j] = -1;
      best_value[j] = -INFINITY;
    }
    for (int64_t iy = w.y0; iy < w.y1; ++iy) {
      for (int64_t ix = w.x0; ix < w.x1; ++ix) {
        const Pack<T, V> values = load_pack<T, V>(x, input(iy * p.width + ix));
        for (int j = 0; j < V; ++j) {
          const C v = load(values.v[j]);
          if (max_replaces(best[j], v, best_value[j])) {
            best[j] = window_offset(w, iy, ix);
            best_value[j] = v;
          }
        }
      }
    }
    W won[V];
    for (int j = 0; j < V; ++j) won[j] = best[j] < 0 ? kNoWinner<W> : static_cast<W>(best[j]);
    store_values<T, V>(y, o, best_value);
    store_elements<W, V>(winners, o, won);
  }
}

template <class T, int V, class W, class Div>
__global__ void max_scatter(const T* gy, const W* winners, T* gx, Planes p, Pool2dGeometry g, Dividers<Div> d) {
  using C = compute_type_t<T>;
  KUSARI_FOR_EACH_ELEMENT(t, p.count * p.in_size() / V) {
    const int64_t i = t * V;
    const InputCover c = cover_of(d, i, p, g);
    C sum[V] = {};
    for (int64_t oy = c.rows.first; oy < c.rows.last; ++oy) {
      for (int64_t ox = c.columns.first; ox < c.columns.last; ++ox) {
        const int64_t o = c.output(oy * p.out_w + ox);
        const auto mine = static_cast<W>(window_offset(window_at(g, p, oy, ox), c.y, c.x));
        W won[V];
        load_elements<W, V>(winners, o, won);
        bool any = false;
        for (int j = 0; j < V; ++j) any = any || won[j] == mine;
        if (!any) continue;  // gy is read only where this place won
        const Pack<T, V> grads = load_pack<T, V>(gy, o);
        for (int j = 0; j < V; ++j) {
          if (won[j] == mine) sum[j] += load(grads.v[j]);
        }
      }
    }
    store_values<T, V>(gx, i, sum);
  }
}

template <class T, int V, class W, class Div>
__global__ void max_gather(const T* x, const W* winners, T* y, Planes p, Pool2dGeometry g, Dividers<Div> d) {
  KUSARI_FOR_EACH_ELEMENT(t, p.count * p.out_size() / V) {
    const int64_t o = t * V;
    const OutputWindow place = window_of(d, o, p, g);
    const Window& w = place.window;
    const PlaneAddress& input = place.input;
    W won[V];
    load_elements<W, V>(winners, o, won);
    T values[V];
    for (int j = 0; j < V; ++j) {
      // Window rows are narrower than the plane's, which fit 32 bits.
      const auto offset = static_cast<uint32_t>(won[j]), width = static_cast<uint32_t>(w.x1 - w.x0);
      values[j] = won[j] == kNoWinner<W> ? store<T>(0.0f)
                                         : x[input((w.y0 + offset / width) * p.width + w.x0 + offset % width) + j];
    }
    store_elements<T, V>(y, o, values);
  }
}

template <class T, int V, class Div>
__global__ void average_forward(const T* x, T* y, Planes p, Pool2dGeometry g, Dividers<Div> d) {
  using C = compute_type_t<T>;
  const C scale = C(1) / static_cast<C>(g.kernel_h * g.kernel_w);
  KUSARI_FOR_EACH_ELEMENT(t, p.count * p.out_size() / V) {
    const int64_t o = t * V;
    const OutputWindow place = window_of(d, o, p, g);
    const Window& w = place.window;
    const PlaneAddress& input = place.input;
    C sum[V] = {};
    for (int64_t iy = w.y0; iy < w.y1; ++iy) {
      for (int64_t ix = w.x0; ix < w.x1; ++ix) {
        const Pack<T, V> values = load_pack<T, V>(x, input(iy * p.width + ix));
        for (int j = 0; j < V; ++j) sum[j] += load(values.v[j]);
      }
    }
    for (int j = 0; j < V; ++j) sum[j] *= scale;
    store_values<T, V>(y, o, sum);
  }
}

template <class T, int V, class Div>
__global__ void average_backward(const T* gy, T* gx, Planes p, Pool2dGeometry g, Dividers<Div> d) {
  using C = compute_type_t<T>;
  const C scale = C(1) / static_cast<C>(g.kernel_h * g.kernel_w);
  KUSARI_FOR_EACH_ELEMENT(t, p.count * p.in_size() / V) {
    const int64_t i = t * V;
    const InputCover c = cover_of(d, i, p, g);
    C sum[V] = {};
    for (int64_t oy = c.rows.first; oy < c.rows.last; ++oy) {
      for (int64_t ox = c.columns.first; ox < c.columns.last; ++ox) {
        const Pack<T, V> grads = load_pack<T, V>(gy, c.output(oy * p.out_w + ox));
        for (int j = 0; j < V; ++j) sum[j] += load(grads.v[j]) * scale;
      }
    }
    store_values<T, V>(gx, i, sum);
  }
}

// How the CUDA backend remembers a max pooling's winners: their window offsets (one per output element,
// in the output's memory order; uint8 or int32 by winners_dtype) with the input's shape, that order and
// the geometry the backward's windows need.
struct DeviceWinners final : KernelState {
  DeviceWinners(Array window_offsets, Shape input, MemoryOrder memory_order, Pool2dGeometry g)
      : offsets(std::move(window_offsets)), input_shape(std::move(input)), order(memory_order), geometry(g) {}
  Array offsets;
  Shape input_shape;
  MemoryOrder order;
  Pool2dGeometry geometry;
};

// The CUDA record behind `state`, made on a's device; throws unless it is one.
const DeviceWinners& winners_of(const KernelState& state, const Array& a, const char* op) {
  const auto* winners = dynamic_cast<const DeviceWinners*>(&state);
  if (!winners)
    throw DeviceError(cat(op, ": expected the winners recorded by the CUDA max_pool2d, got another backend's"));
  if (!(winners->offsets.device() == a.device())) {
    throw DeviceError(
        cat(op, ": the winners were recorded on ", winners->offsets.device(), ", the operand is on ", a.device()));
  }
  return *winners;
}

// Throws unless `shape` is `expected`, the shape these winners were recorded for (`what`).
void require_shape(const Shape& shape, const Shape& expected, const char* what, const char* op) {
  if (shape != expected) throw ShapeError(cat(op, ": expected ", what, " of shape ", expected, ", got ", shape));
}

// The elements a thread of a pooling kernel over T takes at once: a 16-byte pack's worth of channels
// where the operands are channels-last, their channels a multiple of it and every operand's `data`
// 16-byte aligned; one otherwise.
template <class T>
int elements_per_thread(MemoryOrder order, int64_t channels, std::initializer_list<const void*> data) {
  if (order != MemoryOrder::channels_last || channels % kPackElements<T> != 0) return 1;
  return std::all_of(data.begin(), data.end(), pack_aligned) ? kPackElements<T> : 1;
}

// Calls launch_kernel<T, V>(dividers, blocks, stream) on a's device (T a's element type, V its
// elements_per_thread given the operands' `data`) for a pooling kernel whose threads run over the
// `elements` positions of planes of `rows` x `columns` (arrays of a's channels in `order`; the other
// operand has `other_elements`), V positions a thread: with FastDivider's dividers where every position
// of both and every padded position fits 32 bits (fits_fast_pooling), 64-bit division's otherwise.
template <class Launch>
void on_device_with_dividers(const Array& a, const char* op, int64_t elements, int64_t other_elements, int64_t rows,
                             int64_t columns, const Pool2dGeometry& g, MemoryOrder order,
                             std::initializer_list<const void*> data, Launch&& launch_kernel) {
  require_device(a.device(), op);
  if (elements == 0) return;
  DeviceGuard guard(a.device().index);
  const cudaStream_t stream = current_stream(a.device().index);
  const int64_t channels = a.shape()[1];
  const bool channels_last = order == MemoryOrder::channels_last;
  const bool fast = fits_fast_pooling(std::max(elements, other_elements), rows, columns, g);
  visit_floating_dtype(a.dtype(), op, [&]<class T>() {
    const auto launch = [&]<int V>() {
      const unsigned blocks = blocks_for(elements / V);
      if (fast) {
        launch_kernel.template operator()<T, V>(dividers_for<FastDivider>(channels, rows, columns, g, channels_last),
                                                blocks, stream);
      } else {
        launch_kernel.template operator()<T, V>(dividers_for<WideDivider>(channels, rows, columns, g, channels_last),
                                                blocks, stream);
      }
    };
    if (elements_per_thread<T>(order, channels, data) == 1) {
      launch.template operator()<1>();
    } else {
      launch.template operator()<kPackElements<T>>();
    }
  });
  check(cudaGetLastError(), op);
}

// Calls launch<W>() with W the element type of winners of `dtype` (winners_dtype's).
template <class Launch>
void with_winners_type(Dtype dtype, Launch&& launch) {
  if (dtype == Dtype::uint8) {
    launch.template operator()<uint8_t>();
  } else {
    launch.template operator()<int32_t>();
  }
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
  Array offsets = empty_in_order(y_shape, order, winners_dtype(g.kernel_h * g.kernel_w), x.device());
  const Planes p(x.shape(), y_shape);
  with_winners_type(offsets.dtype(), [&]<class W>() {
    on_device_with_dividers(x, "max_pool2d", y.size(), x.size(), p.out_h, p.out_w, g, order,
                            {input.raw_data(), y.raw_data(), offsets.raw_data()},
                            [&]<class T, int V>(auto d, unsigned blocks, cudaStream_t stream) {
                              launch_kernel(&max_forward<T, V, W, typename decltype(d)::divider>, blocks, kThreads,
                                            stream, in<T>(input), out<T>(y), out<W>(offsets), p, g, d);
                            });
  });
  return {y, std::make_shared<DeviceWinners>(offsets, x.shape(), order, g)};
}

Array max_pool2d_scatter(const Array& gy, const KernelState& state, const Shape& gx_shape) {
  const char* op = "max_pool2d_scatter";
  const DeviceWinners& winners = winners_of(state, gy, op);
  require_shape(gy.shape(), winners.offsets.shape(), "a gradient of the pooled output's shape", op);
  require_shape(gx_shape, winners.input_shape, "a result of the pooled input's shape", op);
  const Array g = in_order(gy, winners.order);
  Array gx = empty_in_order(gx_shape, winners.order, gy.dtype(), gy.device());
  const Planes p(gx_shape, gy.shape());
  with_winners_type(winners.offsets.dtype(), [&]<class W>() {
    on_device_with_dividers(gy, op, gx.size(), gy.size(), p.height, p.width, winners.geometry, winners.order,
                            {g.raw_data(), winners.offsets.raw_data(), gx.raw_data()},
                            [&]<class T, int V>(auto d, unsigned blocks, cudaStream_t stream) {
                              launch_kernel(&max_scatter<T, V, W, typename decltype(d)::divider>, blocks, kThreads,
                                            stream, in<T>(g), in<W>(winners.offsets), out<T>(gx), p,
                                            winners.geometry, d);
                            });
  });
  return gx;
}

Array max_pool2d_gather(const Array& x, const KernelState& state) {
  const char* op = "max_pool2d_gather";
  const DeviceWinners& winners = winners_of(state, x, op);
  require_shape(x.shape(), winners.input_shape, "an operand of the pooled input's shape", op);
  const Array input = in_order(x, winners.order);
  Array y = empty_in_order(winners.offsets.shape(), winners.order, x.dtype(), x.device());
  const Planes p(x.shape(), y.shape());
  with_winners_type(winners.offsets.dtype(), [&]<class W>() {
    on_device_with_dividers(x, op, y.size(), x.size(), p.out_h, p.out_w, winners.geometry, winners.order,
                            {winners.offsets.raw_data(), y.raw_data()},
                            [&]<class T, int V>(auto d, unsigned blocks, cudaStream_t stream) {
                              launch_kernel(&max_gather<T, V, W, typename decltype(d)::divider>, blocks, kThreads,
                                            stream, in<T>(input), in<W>(winners.offsets), out<T>(y), p,
                                            winners.geometry, d);
                            });
  });
  return y;
}

Array average_pool2d(const Array& x, const Pool2dGeometry& g, const Shape& y_shape) {
  const MemoryOrder order = memory_order_of(x);
  const Array input = in_order(x, order);
  Array y = empty_in_order(y_shape, order, x.dtype(), x.device());
  const Planes p(x.shape(), y_shape);
  on_device_with_dividers(x, "average_pool2d", y.size(), x.size(), p.out_h, p.out_w, g, order,
                          {input.raw_data(), y.raw_data()},
                          [&]<class T, int V>(auto d, unsigned blocks, cudaStream_t stream) {
                            launch_kernel(&average_forward<T, V, typename decltype(d)::divider>, blocks, kThreads,
                                          stream, in<T>(input), out<T>(y), p, g, d);
                          });
  return y;
}

Array average_pool2d_backward(const Array& gy, const Pool2dGeometry& g, const Shape& gx_shape) {
  const MemoryOrder order = memory_order_of(gy);
  const Array grad = in_order(gy, order);
  Array gx = empty_in_order(gx_shape, order, gy.dtype(), gy.device());
  const Planes p(gx_shape, gy.shape());
  on_device_with_dividers(gy, "average_pool2d_backward", gx.size(), gy.size(), p.height, p.width, g, order,
                          {grad.raw_data(), gx.raw_data()},
                          [&]<class T, int V>(auto d, unsigned blocks, cudaStream_t stream) {
                            launch_kernel(&average_backward<T, V, typename decltype(d)::divider>, blocks, kThreads,
                                          stream, in<T>(grad), out<T>(gx), p, g, d);
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
