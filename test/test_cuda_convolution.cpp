// The CUDA convolution (cuDNN) against the CPU's: forward with and without bias, data and filter
// gradients, for strides, padding, dilation and groups, row-major and channels-last operands, every
// floating dtype, with cuDNN's heuristics and with its timed search (set_cudnn_benchmark), operands
// at any alignment; every pass through an engine plan (none through the legacy calls).
// Part of test_cuda_device (its main skips without a GPU).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/convolution_legacy.h>
#include <kusari/kernels/cuda/runtime.h>
#include <kusari/kernels/layer_routines.h>

#include "cuda_testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

double tolerance(Dtype dtype) {
  return dtype == Dtype::float64 ? 1e-12 : dtype == Dtype::float32 ? 1e-5 : dtype == Dtype::float16 ? 3e-3 : 2e-2;
}

int64_t out_extent(int64_t size, int64_t k, int64_t s, int64_t pad, int64_t dilation) {
  return (size + 2 * pad - dilation * (k - 1) - 1) / s + 1;
}

struct Case {
  int64_t channels, out_channels, kh, kw;
  Conv2dGeometry geometry;
};

}  // namespace

TEST_CASE("forward, data and filter gradients equal the CPU's") {
  const std::vector<Case> cases = {{3, 8, 3, 3, {1, 1, 1, 1, 1, 1, 1}},
                                   {4, 6, 1, 1, {2, 2, 0, 0, 1, 1, 1}},
                                   {6, 4, 3, 2, {2, 1, 1, 0, 1, 1, 2}},
                                   {4, 4, 3, 3, {1, 1, 2, 2, 2, 2, 4}},
                                   {8, 16, 5, 5, {2, 2, 2, 2, 1, 1, 1}}};
  for (const bool benchmark : {false, true}) {
    cuda::set_cudnn_benchmark(benchmark);
    CHECK(cuda::cudnn_benchmark() == benchmark);
    for (const Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
      for (const Case& c : cases) {
        for (const bool channels_last : {false, true}) {
          const Conv2dGeometry& g = c.geometry;
          const std::string what = dtype_name(dtype) + " " + std::to_string(c.kh) + "x" + std::to_string(c.kw) +
                                   " groups " + std::to_string(g.groups) + (channels_last ? " channels-last" : "") +
                                   (benchmark ? " timed" : "");
          INFO(what);
          Array x = Array::normal({5, c.channels, 11, 10}, 0, 1, 71, dtype);
          Array w = Array::normal({c.out_channels, c.channels / g.groups, c.kh, c.kw}, 0, 0.3, 72, dtype);
          if (channels_last) {
            x = in_order(x, MemoryOrder::channels_last);
            w = in_order(w, MemoryOrder::channels_last);
          }
          const Array b = Array::normal({c.out_channels}, 0, 1, 73, dtype);
          const Shape y_shape{5, c.out_channels, out_extent(11, c.kh, g.stride_h, g.pad_h, g.dilation_h),
                              out_extent(10, c.kw, g.stride_w, g.pad_w, g.dilation_w)};
          const Array host_y = ops::convolution_2d(x, w, b, g, y_shape);
          const Array device_y = ops::convolution_2d(on_gpu(x), on_gpu(w), on_gpu(b), g, y_shape);
          check_close(device_y, host_y, tolerance(dtype), "forward", Relative::to_largest);
          check_close(ops::convolution_2d(on_gpu(x), on_gpu(w), Array(), g, y_shape),
                      ops::convolution_2d(x, w, Array(), g, y_shape), tolerance(dtype), "forward without bias",
                      Relative::to_largest);
          const Array gy = Array::normal(y_shape, 0, 1, 74, dtype);
          check_close(ops::convolution_2d_backward_data(on_gpu(gy), on_gpu(w), Array(), g, x.shape()),
                      ops::convolution_2d_backward_data(gy, w, Array(), g, x.shape()), tolerance(dtype),
                      "data gradient", Relative::to_largest);
          const Array bx = Array::normal({c.channels}, 0, 1, 75, dtype);
          check_close(ops::convolution_2d_backward_data(on_gpu(gy), on_gpu(w), on_gpu(bx), g, x.shape()),
                      ops::convolution_2d_backward_data(gy, w, bx, g, x.shape()), tolerance(dtype),
                      "deconvolution with bias", Relative::to_largest);
          check_close(ops::convolution_2d_backward_filter(on_gpu(x), on_gpu(gy), g, w.shape()),
                      ops::convolution_2d_backward_filter(x, gy, g, w.shape()), tolerance(dtype), "filter gradient",
                      Relative::to_largest);
        }
      }
    }
  }
  cuda::set_cudnn_benchmark(false);
  CHECK(kernels::cuda::legacy_convolution_plans() == 0);
}

TEST_CASE("operands at an odd element (2-byte aligned) equal the CPU's") {
  for (const Dtype dtype : {Dtype::float16, Dtype::bfloat16, Dtype::float32}) {
    INFO(dtype_name(dtype));
    const Shape x_shape{3, 8, 9, 9}, y_shape{3, 8, 9, 9};
    const int64_t n = 3 * 8 * 9 * 9;
    // Views one element into larger arrays on the device: their data starts 2 (4 for float32) bytes in.
    const Array x_whole = Array::normal({n + 1}, 0, 1, 91, dtype), gy_whole = Array::normal({n + 1}, 0, 1, 92, dtype);
    const Array x = x_whole.get_item({Slice{1, n + 1}}).reshape(x_shape);
    const Array gy = gy_whole.get_item({Slice{1, n + 1}}).reshape(y_shape);
    const Array device_x = on_gpu(x_whole).get_item({Slice{1, n + 1}}).reshape(x_shape);
    const Array device_gy = on_gpu(gy_whole).get_item({Slice{1, n + 1}}).reshape(y_shape);
    const Array w = Array::normal({8, 8, 3, 3}, 0, 0.3, 93, dtype);
    const Conv2dGeometry g{1, 1, 1, 1, 1, 1, 1};
    check_close(ops::convolution_2d(device_x, on_gpu(w), Array(), g, y_shape),
                ops::convolution_2d(x, w, Array(), g, y_shape), tolerance(dtype), "forward", Relative::to_largest);
    check_close(ops::convolution_2d_backward_data(device_gy, on_gpu(w), Array(), g, x_shape),
                ops::convolution_2d_backward_data(gy, w, Array(), g, x_shape), tolerance(dtype), "data gradient",
                Relative::to_largest);
    check_close(ops::convolution_2d_backward_filter(device_x, device_gy, g, w.shape()),
                ops::convolution_2d_backward_filter(x, gy, g, w.shape()), tolerance(dtype), "filter gradient",
                Relative::to_largest);
  }
  CHECK(kernels::cuda::legacy_convolution_plans() == 0);
}

TEST_CASE("a channels-last input gives a channels-last output on the device") {
  const Array x = on_gpu(in_order(Array::normal({2, 8, 6, 6}, 0, 1, 76, Dtype::float16), MemoryOrder::channels_last));
  const Array w = Array::normal({16, 8, 3, 3}, 0, 0.3, 77, Dtype::float16).to(gpu);
  const Array y = ops::convolution_2d(x, w, Array(), {1, 1, 1, 1, 1, 1, 1}, {2, 16, 6, 6});
  CHECK(memory_order_of(y) == MemoryOrder::channels_last);
}

TEST_CASE("geometries cuDNN's output formula does not give (cover_all, a deconvolution's outsize) equal the CPU's") {
  // (H, W) of x, kernel, geometry, and the output extents with Chainer's cover_all windows.
  struct Cover {
    int64_t h, w, kh, kw;
    Conv2dGeometry geometry;
    int64_t oh, ow;
  };
  const std::vector<Cover> cases = {{6, 6, 3, 3, {2, 2, 0, 0, 1, 1, 1}, 3, 3},
                                    {7, 9, 2, 3, {3, 3, 1, 1, 2, 2, 1}, 3, 3},
                                    {10, 13, 3, 2, {2, 3, 1, 0, 2, 1, 2}, 5, 5}};
  for (const Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16}) {
    for (const Cover& c : cases) {
      for (const bool channels_last : {false, true}) {
        const Conv2dGeometry& g = c.geometry;
        INFO(dtype_name(dtype), " ", c.h, "x", c.w, " kernel ", c.kh, "x", c.kw, channels_last ? " channels-last" : "");
        Array x = Array::normal({2, 4, c.h, c.w}, 0, 1, 81, dtype);
        if (channels_last) x = in_order(x, MemoryOrder::channels_last);
        const Array w = Array::normal({4, 4 / g.groups, c.kh, c.kw}, 0, 0.3, 82, dtype);
        const Shape y_shape{2, 4, c.oh, c.ow};
        check_close(ops::convolution_2d(on_gpu(x), on_gpu(w), Array(), g, y_shape),
                    ops::convolution_2d(x, w, Array(), g, y_shape), tolerance(dtype), "forward", Relative::to_largest);
        const Array gy = Array::normal(y_shape, 0, 1, 83, dtype);
        check_close(ops::convolution_2d_backward_data(on_gpu(gy), on_gpu(w), Array(), g, x.shape()),
                    ops::convolution_2d_backward_data(gy, w, Array(), g, x.shape()), tolerance(dtype),
                    "data gradient", Relative::to_largest);
        check_close(ops::convolution_2d_backward_filter(on_gpu(x), on_gpu(gy), g, w.shape()),
                    ops::convolution_2d_backward_filter(x, gy, g, w.shape()), tolerance(dtype), "filter gradient",
                    Relative::to_largest);
      }
    }
  }
}
