// How the CUDA backend puts a convolution to cuDNN (plain C++, so it runs in every build): the extents
// cuDNN is given fit its output formula for every geometry the CPU accepts (cover_all, a
// deconvolution's outsize), and a one-axis convolution and its adjoint computed cuDNN's way at those
// extents (zeros past the image and past gy, the output cropped) equal the definition; the memory order
// of each dtype's pass; the algorithm policy KUSARI_CUDNN_BENCHMARK starts (run again with it set).

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/convolution_plan.h>
#include <kusari/kernels/cuda/runtime.h>

#include "testing.h"

using namespace kusari;
using namespace kusari::kernels::cuda;

namespace {

// One axis of a convolution's geometry.
struct Axis {
  int64_t kernel, stride, pad, dilation;
  int64_t span() const { return (kernel - 1) * dilation + 1; }
};

// Windows by the definition (test_convolution.cpp's): every stride from -pad while the span fits the
// padded image; cover_all keeps one more that starts inside it.
int64_t windows(int64_t image, const Axis& a, bool cover_all) {
  int64_t count = 0;
  while (count * a.stride + a.span() <= image + 2 * a.pad) ++count;
  if (cover_all && count > 0 && (count - 1) * a.stride + a.span() < image + 2 * a.pad) ++count;
  return count;
}

// cuDNN's output formula.
int64_t dnn_windows(int64_t image, const Axis& a) { return (image + 2 * a.pad - a.span()) / a.stride + 1; }

// y[j] = sum_k x[j * stride - pad + k * dilation] w[k] over the taps inside x, for `count` windows.
std::vector<double> correlate(const std::vector<double>& x, const std::vector<double>& w, const Axis& a,
                              int64_t count) {
  std::vector<double> y(static_cast<size_t>(count), 0.0);
  for (int64_t j = 0; j < count; ++j) {
    for (int64_t k = 0; k < a.kernel; ++k) {
      const int64_t i = j * a.stride - a.pad + k * a.dilation;
      if (i >= 0 && i < static_cast<int64_t>(x.size())) y[j] += x[i] * w[k];
    }
  }
  return y;
}

// The adjoint: gx (of `image` elements) gathers every window's gy times its taps.
std::vector<double> transpose_correlate(const std::vector<double>& gy, const std::vector<double>& w, const Axis& a,
                                        int64_t image) {
  std::vector<double> gx(static_cast<size_t>(image), 0.0);
  for (int64_t j = 0; j < static_cast<int64_t>(gy.size()); ++j) {
    for (int64_t k = 0; k < a.kernel; ++k) {
      const int64_t i = j * a.stride - a.pad + k * a.dilation;
      if (i >= 0 && i < image) gx[i] += gy[j] * w[k];
    }
  }
  return gx;
}

std::vector<double> ramp(int64_t n, double start) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + 0.37 * static_cast<double>(i * i % 11) - 0.5 * (i % 3);
  return v;
}

std::vector<double> resized(std::vector<double> v, int64_t n) {
  v.resize(static_cast<size_t>(n), 0.0);
  return v;
}

}  // namespace

TEST_CASE("the extents given to cuDNN fit its formula, and computing there equals the definition") {
  int64_t geometries = 0, extended = 0;
  for (int64_t kernel = 1; kernel <= 4; ++kernel) {
    for (int64_t stride = 1; stride <= 4; ++stride) {
      for (int64_t pad = 0; pad <= 3; ++pad) {
        for (int64_t dilation = 1; dilation <= 3; ++dilation) {
          const Axis a{kernel, stride, pad, dilation};
          for (int64_t image = 1; image <= 12; ++image) {
            for (const bool cover_all : {false, true}) {
              const int64_t output = windows(image, a, cover_all);
              if (output < 1) continue;
              INFO("kernel ", kernel, " stride ", stride, " pad ", pad, " dilation ", dilation, " image ", image,
                   " cover_all ", cover_all);
              ++geometries;
              const DnnExtent e = dnn_extent(image, output, kernel, stride, pad, dilation);
              REQUIRE(e.image >= image);
              REQUIRE(e.output >= output);
              REQUIRE(dnn_windows(e.image, a) == e.output);
              if (dnn_windows(image, a) == output) CHECK((e.image == image && e.output == output));
              if (e.image != image || e.output != output) ++extended;
              // Forward: the zero-extended image at cuDNN's extents, cropped, is the definition's output.
              const std::vector<double> x = ramp(image, -1.0), w = ramp(kernel, 0.5);
              const std::vector<double> y = correlate(resized(x, e.image), w, a, e.output);
              CHECK(std::vector<double>(y.begin(), y.begin() + output) == correlate(x, w, a, output));
              // Data gradient: gy read with zeros past it, gx computed at the extended extent and cropped.
              const std::vector<double> gy = ramp(output, 0.25);
              const std::vector<double> gx = transpose_correlate(resized(gy, e.output), w, a, e.image);
              CHECK(std::vector<double>(gx.begin(), gx.begin() + image) == transpose_correlate(gy, w, a, image));
            }
          }
        }
      }
    }
  }
  CHECK(geometries > 1000);
  CHECK(extended > 100);  // cover_all geometries that cuDNN alone would refuse
}

TEST_CASE("a deconvolution's outsize beyond the windows it needs is given whole, its gradient read as zeros") {
  // Outsize 9 for 3 windows of 3 taps every 2: the last element lies past every window.
  const DnnExtent e = dnn_extent(9, 3, 3, 2, 0, 1);
  CHECK(e.image == 9);
  CHECK(e.output == 4);
  // cover_all's last window on 6 elements (kernel 3, stride 2): one zero past the image.
  const DnnExtent c = dnn_extent(6, 3, 3, 2, 0, 1);
  CHECK(c.image == 7);
  CHECK(c.output == 3);
}

TEST_CASE("channels-last images run channels-last on cuDNN but in float64 (no filter-gradient algorithm)") {
  const Shape shape{2, 3, 4, 5};
  for (const Dtype dtype : {Dtype::float16, Dtype::bfloat16, Dtype::float32, Dtype::float64}) {
    INFO(dtype);
    const Array row_major = Array::zeros(shape, dtype);
    const Array channels_last = in_order(row_major, MemoryOrder::channels_last);
    const bool nhwc = dtype != Dtype::float64;
    CHECK(dnn_pass_order(channels_last) == (nhwc ? MemoryOrder::channels_last : MemoryOrder::row_major));
    CHECK(dnn_pass_order(row_major) == MemoryOrder::row_major);
  }
  // One channel says its order by its channel axis's stride (the first convolution of grey images).
  const Array grey = Array::zeros({2, 1, 4, 5}, Dtype::float16);
  CHECK(dnn_pass_order(grey) == MemoryOrder::row_major);
  CHECK(dnn_pass_order(in_order(grey, MemoryOrder::channels_last)) == MemoryOrder::channels_last);
}

TEST_CASE("cudnn_benchmark starts as KUSARI_CUDNN_BENCHMARK says, and another value is refused, naming it") {
  const char* value = std::getenv("KUSARI_CUDNN_BENCHMARK");
  const std::string given = value ? value : "";
  if (given.empty() || given == "0" || given == "1") {
    CHECK(kusari::cuda::cudnn_benchmark() == (given == "1"));
    kusari::cuda::set_cudnn_benchmark(given != "1");  // the program's own choice wins
    CHECK(kusari::cuda::cudnn_benchmark() == (given != "1"));
    kusari::cuda::set_cudnn_benchmark(given == "1");
    return;
  }
  kusari::testing::expect_error<ValueError>([] { kusari::cuda::cudnn_benchmark(); },
                                            {"KUSARI_CUDNN_BENCHMARK", "expected 0 or 1", "'" + given + "'"});
}
