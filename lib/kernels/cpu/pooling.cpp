// CPU 2-D pooling: direct loops over each (H, W) plane of a row-major NCHW array, planes spread over the
// thread pool; max pooling also runs on channels-last arrays (when its outputs are channels-last), one
// image position's channels at a time. Values are combined in their compute type (float for the half
// types); the winners are plane positions iy * W + ix in either order.

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/detail/pooling_functions.h>
#include <kusari/kernels/ops/pooling.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

// Calls body(plane, buffer) for every plane index in parallel, where buffer is a per-thread scratch vector
// of `scratch` compute-type elements of T.
template <class T, class Body>
void for_each_plane(const Planes& p, int64_t work_per_plane, int64_t scratch, Body&& body) {
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, work_per_plane));
  parallel_for(p.count, grain, [&](int64_t begin, int64_t end) {
    std::vector<compute_type_t<T>> buffer(static_cast<size_t>(scratch));
    for (int64_t plane = begin; plane < end; ++plane) body(plane, buffer);
  });
}

// True when a pooling's outputs were allocated channels-last, so the channels-last loops run.
bool channels_last(const Array& output) { return memory_order_of(output) == MemoryOrder::channels_last; }

// Max pooling of channels-last x into channels-last y and indexes: every output position of every image
// compares its window's positions channel-wise, positions spread over the thread pool.
void max_pool2d_channels_last(const Array& x, const Pool2dGeometry& g, const Array& y, const Array& indexes) {
  const Planes p(x.shape(), y.shape());
  const int64_t channels = x.shape()[1], positions = x.shape()[0] * p.out_size();
  const Array in = in_order(x, MemoryOrder::channels_last);
  visit_floating_dtype(x.dtype(), "max_pool2d", [&]<class T>() {
    using C = compute_type_t<T>;
    const T* src = static_cast<const T*>(in.raw_data());
    T* dst = static_cast<T*>(y.raw_data());
    int32_t* winners = static_cast<int32_t*>(indexes.raw_data());
    const int64_t work = channels * g.kernel_h * g.kernel_w;
    parallel_for(positions, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, work)), [&](int64_t begin, int64_t end) {
      std::vector<C> best_value(static_cast<size_t>(channels));
      for (int64_t o = begin; o < end; ++o) {
        const int64_t n = o / p.out_size(), oy = o % p.out_size() / p.out_w, ox = o % p.out_w;
        const Window w = window_at(g, p, oy, ox);
        std::fill(best_value.begin(), best_value.end(), -std::numeric_limits<C>::infinity());
        int32_t* best = winners + o * channels;
        std::fill(best, best + channels, -1);
        for (int64_t iy = w.y0; iy < w.y1; ++iy) {
          for (int64_t ix = w.x0; ix < w.x1; ++ix) {
            const int64_t at = iy * p.width + ix;
            const T* pixel = src + (n * p.in_size() + at) * channels;
            for (int64_t c = 0; c < channels; ++c) {
              const C v = load(pixel[c]);
              C& b = best_value[static_cast<size_t>(c)];
              if (max_replaces(best[c], v, b)) {
                best[c] = static_cast<int32_t>(at);
                b = v;
              }
            }
          }
        }
        for (int64_t c = 0; c < channels; ++c) dst[o * channels + c] = store<T>(best_value[static_cast<size_t>(c)]);
      }
    });
  });
}

// gx (channels-last, zeroed here) += gy at each window's winner, channel-wise; images over the thread pool.
void max_pool2d_scatter_channels_last(const Array& gy, const Array& indexes, const Array& gx) {
  const Planes p(gx.shape(), gy.shape());
  const int64_t channels = gx.shape()[1];
  const Array g = in_order(gy, MemoryOrder::channels_last);
  visit_floating_dtype(gy.dtype(), "max_pool2d_scatter", [&]<class T>() {
    using C = compute_type_t<T>;
    const T* src = static_cast<const T*>(g.raw_data());
    const int32_t* at = static_cast<const int32_t*>(indexes.raw_data());
    T* dst = static_cast<T*>(gx.raw_data());
    const int64_t image_in = p.in_size() * channels, image_out = p.out_size() * channels;
    parallel_for(gx.shape()[0], std::max<int64_t>(1, kGrain / std::max<int64_t>(1, image_in + image_out)),
                 [&](int64_t begin, int64_t end) {
      std::vector<C> sum(static_cast<size_t>(image_in));
      for (int64_t n = begin; n < end; ++n) {
        std::fill(sum.begin(), sum.end(), C(0));
        for (int64_t o = n * image_out; o < (n + 1) * image_out; ++o) {
          if (at[o] >= 0) sum[static_cast<size_t>(at[o] * channels + o % channels)] += load(src[o]);
        }
        for (int64_t i = 0; i < image_in; ++i) dst[n * image_in + i] = store<T>(sum[static_cast<size_t>(i)]);
      }
    });
  });
}

// y (channels-last) = x at each window's winner, channel-wise.
void max_pool2d_gather_channels_last(const Array& x, const Array& indexes, const Array& y) {
  const Planes p(x.shape(), y.shape());
  const int64_t channels = x.shape()[1];
  const Array in = in_order(x, MemoryOrder::channels_last);
  visit_floating_dtype(x.dtype(), "max_pool2d_gather", [&]<class T>() {
    const T* src = static_cast<const T*>(in.raw_data());
    const int32_t* at = static_cast<const int32_t*>(indexes.raw_data());
    T* dst = static_cast<T*>(y.raw_data());
    parallel_for(y.size(), kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const int64_t n = o / (p.out_size() * channels);
        dst[o] = at[o] >= 0 ? src[(n * p.in_size() + at[o]) * channels + o % channels] : store<T>(0);
      }
    });
  });
}

void max_pool2d_kernel(const Array& x, const Pool2dGeometry& g, const Array& y, const Array& indexes) {
  if (channels_last(y)) return max_pool2d_channels_last(x, g, y, indexes);
  const Planes p(x.shape(), y.shape());
  const Array in = x.contiguous();
  visit_floating_dtype(x.dtype(), "max_pool2d", [&]<class T>() {
    const T* src = static_cast<const T*>(in.raw_data());
    T* dst = static_cast<T*>(y.raw_data());
    int32_t* winners = static_cast<int32_t*>(indexes.raw_data());
    for_each_plane<T>(p, p.out_size() * g.kernel_h * g.kernel_w, 0, [&](int64_t plane, auto&) {
      const T* image = src + plane * p.in_size();
      for (int64_t oy = 0; oy < p.out_h; ++oy) {
        for (int64_t ox = 0; ox < p.out_w; ++ox) {
          const Window w = window_at(g, p, oy, ox);
          int64_t best = -1;
          compute_type_t<T> best_value = -std::numeric_limits<compute_type_t<T>>::infinity();
          for (int64_t iy = w.y0; iy < w.y1; ++iy) {
            for (int64_t ix = w.x0; ix < w.x1; ++ix) {
              const compute_type_t<T> v = load(image[iy * p.width + ix]);
              if (max_replaces(best, v, best_value)) {
                best = iy * p.width + ix;
                best_value = v;
              }
            }
          }
          const int64_t o = plane * p.out_size() + oy * p.out_w + ox;
          dst[o] = store<T>(best_value);
          winners[o] = static_cast<int32_t>(best);
        }
      }
    });
  });
}

void max_pool2d_scatter_kernel(const Array& gy, const Array& indexes, const Array& gx) {
  if (channels_last(indexes)) return max_pool2d_scatter_channels_last(gy, indexes, gx);
  const Planes p(gx.shape(), gy.shape());
  const Array g = gy.contiguous(), winners = indexes.contiguous();
  visit_floating_dtype(gy.dtype(), "max_pool2d_scatter", [&]<class T>() {
    const T* src = static_cast<const T*>(g.raw_data());
    const int32_t* at = static_cast<const int32_t*>(winners.raw_data());
    T* dst = static_cast<T*>(gx.raw_data());
    for_each_plane<T>(p, p.out_size() + p.in_size(), p.in_size(), [&](int64_t plane, auto& sum) {
      std::fill(sum.begin(), sum.end(), 0);
      for (int64_t o = plane * p.out_size(); o < (plane + 1) * p.out_size(); ++o) {
        if (at[o] >= 0) sum[static_cast<size_t>(at[o])] += load(src[o]);
      }
      for (int64_t i = 0; i < p.in_size(); ++i) dst[plane * p.in_size() + i] = store<T>(sum[static_cast<size_t>(i)]);
    });
  });
}

void max_pool2d_gather_kernel(const Array& x, const Array& indexes, const Array& y) {
  if (channels_last(indexes)) return max_pool2d_gather_channels_last(x, indexes, y);
  const Planes p(x.shape(), y.shape());
  const Array in = x.contiguous(), winners = indexes.contiguous();
  visit_floating_dtype(x.dtype(), "max_pool2d_gather", [&]<class T>() {
    const T* src = static_cast<const T*>(in.raw_data());
    const int32_t* at = static_cast<const int32_t*>(winners.raw_data());
    T* dst = static_cast<T*>(y.raw_data());
    for_each_plane<T>(p, p.out_size(), 0, [&](int64_t plane, auto&) {
      for (int64_t o = plane * p.out_size(); o < (plane + 1) * p.out_size(); ++o) {
        dst[o] = at[o] >= 0 ? src[plane * p.in_size() + at[o]] : store<T>(0);
      }
    });
  });
}

void average_pool2d_kernel(const Array& x, const Pool2dGeometry& g, const Array& y) {
  const Planes p(x.shape(), y.shape());
  const Array in = x.contiguous();
  visit_floating_dtype(x.dtype(), "average_pool2d", [&]<class T>() {
    using C = compute_type_t<T>;
    const C scale = C(1) / static_cast<C>(g.kernel_h * g.kernel_w);
    const T* src = static_cast<const T*>(in.raw_data());
    T* dst = static_cast<T*>(y.raw_data());
    for_each_plane<T>(p, p.out_size() * g.kernel_h * g.kernel_w, 0, [&](int64_t plane, auto&) {
      const T* image = src + plane * p.in_size();
      for (int64_t oy = 0; oy < p.out_h; ++oy) {
        for (int64_t ox = 0; ox < p.out_w; ++ox) {
          const Window w = window_at(g, p, oy, ox);
          C sum = 0;
          for (int64_t iy = w.y0; iy < w.y1; ++iy) {
            for (int64_t ix = w.x0; ix < w.x1; ++ix) sum += load(image[iy * p.width + ix]);
          }
          dst[plane * p.out_size() + oy * p.out_w + ox] = store<T>(sum * scale);
        }
      }
    });
  });
}

void average_pool2d_backward_kernel(const Array& gy, const Pool2dGeometry& g, const Array& gx) {
  const Planes p(gx.shape(), gy.shape());
  const Array in = gy.contiguous();
  visit_floating_dtype(gy.dtype(), "average_pool2d_backward", [&]<class T>() {
    using C = compute_type_t<T>;
    const C scale = C(1) / static_cast<C>(g.kernel_h * g.kernel_w);
    const T* src = static_cast<const T*>(in.raw_data());
    T* dst = static_cast<T*>(gx.raw_data());
    for_each_plane<T>(p, p.out_size() * g.kernel_h * g.kernel_w, p.in_size(), [&](int64_t plane, auto& sum) {
      std::fill(sum.begin(), sum.end(), 0);
      for (int64_t oy = 0; oy < p.out_h; ++oy) {
        for (int64_t ox = 0; ox < p.out_w; ++ox) {
          const Window w = window_at(g, p, oy, ox);
          const C share = load(src[plane * p.out_size() + oy * p.out_w + ox]) * scale;
          for (int64_t iy = w.y0; iy < w.y1; ++iy) {
            for (int64_t ix = w.x0; ix < w.x1; ++ix) sum[static_cast<size_t>(iy * p.width + ix)] += share;
          }
        }
      }
      for (int64_t i = 0; i < p.in_size(); ++i) dst[plane * p.in_size() + i] = store<T>(sum[static_cast<size_t>(i)]);
    });
  });
}

// How the CPU remembers a max pooling's winners: int32 plane positions, one per output element, in the
// input's memory order (the outputs and the gradients follow it), with the input's shape.
struct PlaneWinners final : KernelState {
  PlaneWinners(Array positions, Shape input) : indexes(std::move(positions)), input_shape(std::move(input)) {}
  Array indexes;
  Shape input_shape;
};

// The CPU's record behind `state`; throws unless it is one.
const PlaneWinners& winners_of(const KernelState& state, const char* op) {
  const auto* winners = dynamic_cast<const PlaneWinners*>(&state);
  if (!winners) throw DeviceError(cat(op, ": expected the winners recorded by the CPU's max_pool2d, got another backend's"));
  return *winners;
}

// Throws unless `shape` is `expected`, the shape these winners were recorded for (`what`).
void require_shape(const Shape& shape, const Shape& expected, const char* what, const char* op) {
  if (shape != expected) throw ShapeError(cat(op, ": expected ", what, " of shape ", expected, ", got ", shape));
}

MaxPool2dResult max_pool2d(const Array& x, const Pool2dGeometry& g, const Shape& y_shape) {
  if (x.shape()[2] * x.shape()[3] > std::numeric_limits<int32_t>::max()) {  // the winners are int32 plane positions
    throw ShapeError(cat("max_pooling_2d: expected an (H, W) plane of at most 2^31 - 1 elements, got x ", x.shape()));
  }
  const MemoryOrder order = memory_order_of(x);
  Array y = empty_in_order(y_shape, order, x.dtype(), x.device());
  Array indexes = empty_in_order(y_shape, order, Dtype::int32, x.device());
  max_pool2d_kernel(x, g, y, indexes);
  return {y, std::make_shared<PlaneWinners>(indexes, x.shape())};
}

Array max_pool2d_scatter(const Array& gy, const KernelState& state, const Shape& gx_shape) {
  const char* op = "max_pool2d_scatter";
  const PlaneWinners& winners = winners_of(state, op);
  const Array& indexes = winners.indexes;
  require_shape(gy.shape(), indexes.shape(), "a gradient of the pooled output's shape", op);
  require_shape(gx_shape, winners.input_shape, "a result of the pooled input's shape", op);
  Array gx = empty_in_order(gx_shape, memory_order_of(indexes), gy.dtype(), gy.device());
  max_pool2d_scatter_kernel(gy, indexes, gx);
  return gx;
}

Array max_pool2d_gather(const Array& x, const KernelState& state) {
  const char* op = "max_pool2d_gather";
  const PlaneWinners& winners = winners_of(state, op);
  const Array& indexes = winners.indexes;
  require_shape(x.shape(), winners.input_shape, "an operand of the pooled input's shape", op);
  Array y = empty_in_order(indexes.shape(), memory_order_of(indexes), x.dtype(), x.device());
  max_pool2d_gather_kernel(x, indexes, y);
  return y;
}

Array average_pool2d(const Array& x, const Pool2dGeometry& g, const Shape& y_shape) {
  Array y = Array::empty(y_shape, x.dtype(), x.device());
  average_pool2d_kernel(x, g, y);
  return y;
}

Array average_pool2d_backward(const Array& gy, const Pool2dGeometry& g, const Shape& gx_shape) {
  Array gx = Array::empty(gx_shape, gy.dtype(), gy.device());
  average_pool2d_backward_kernel(gy, g, gx);
  return gx;
}

}  // namespace

void register_pooling_kernels() {
  install_kernel<kernel_ops::MaxPool2d>(DeviceType::cpu, "cpu", max_pool2d);
  install_kernel<kernel_ops::MaxPool2dScatter>(DeviceType::cpu, "cpu", max_pool2d_scatter);
  install_kernel<kernel_ops::MaxPool2dGather>(DeviceType::cpu, "cpu", max_pool2d_gather);
  install_kernel<kernel_ops::AveragePool2d>(DeviceType::cpu, "cpu", average_pool2d);
  install_kernel<kernel_ops::AveragePool2dBackward>(DeviceType::cpu, "cpu", average_pool2d_backward);
}

}  // namespace kusari::kernels::cpu
