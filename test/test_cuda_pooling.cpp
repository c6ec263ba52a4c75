// The CUDA pooling against the CPU's: max pooling (values, the winners through scatter and gather,
// ties and NaN), average pooling and both gradients, for windows with strides and padding (a window
// wholly in padding too), row-major and channels-last inputs (results in the input's order), every
// floating dtype, windows up to 256 elements (winners kept as a byte, then as int32); channels-last with
// 4 and 16 channels (the kernels take a 16-byte access's channels a thread where they divide the
// channels: 16 for every dtype, 4 for float32 and float64) and off a 16-byte boundary (one channel a
// thread).
// Part of test_cuda_device (its main skips without a GPU).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/layer_routines.h>

#include "cuda_testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

// The output extent of a pooling axis.
int64_t pooled(int64_t size, int64_t k, int64_t s, int64_t pad) { return (size + 2 * pad - k) / s + 1; }

// Checks every pooling routine on x (its device copy `on_device`) against the CPU's for geometry g.
void check_pooling(const Array& x, const Array& on_device, const Pool2dGeometry& g, const std::string& what) {
  const Dtype dtype = x.dtype();
  const Shape y_shape{x.shape()[0], x.shape()[1], pooled(x.shape()[2], g.kernel_h, g.stride_h, g.pad_h),
                      pooled(x.shape()[3], g.kernel_w, g.stride_w, g.pad_w)};
  const Array gy = Array::normal(y_shape, 0, 1, 62, dtype);
  const MaxPool2dResult host = ops::max_pooling_2d(x, g, y_shape);
  const MaxPool2dResult device = ops::max_pooling_2d(on_device, g, y_shape);
  check_close(device.y, host.y, 0, "max, " + what);
  // Channels-last stays channels-last, read and written in place (no row-major copy on the device); an
  // output plane of one element is both orders.
  if (y_shape[2] * y_shape[3] > 1) {
    CHECK(memory_order_of(device.y) == memory_order_of(x));
    CHECK(memory_order_of(ops::average_pooling_2d(on_device, g, y_shape)) == memory_order_of(x));
  }
  check_close(ops::max_pooling_2d_scatter(on_gpu(gy), *device.winners, x.shape()),
              ops::max_pooling_2d_scatter(gy, *host.winners, x.shape()), 1e-6, "max scatter, " + what);
  const Array other = Array::normal(x.shape(), 0, 1, 63, dtype);
  check_close(ops::max_pooling_2d_gather(on_gpu(other), *device.winners),
              ops::max_pooling_2d_gather(other, *host.winners), 0, "max gather, " + what);
  const double tolerance = dtype == Dtype::float64 ? 1e-14 : dtype == Dtype::float32 ? 1e-6 : 1e-2;
  check_close(ops::average_pooling_2d(on_device, g, y_shape), ops::average_pooling_2d(x, g, y_shape), tolerance,
              "average, " + what);
  check_close(ops::average_pooling_2d_backward(on_gpu(gy), g, x.shape()),
              ops::average_pooling_2d_backward(gy, g, x.shape()), tolerance, "average backward, " + what);
}

// Integers in [0, 4) (many ties, so the first-of-equals rule matters) with a NaN, shape (3, channels, 9, 8).
Array tied_values(int64_t channels, Dtype dtype) {
  std::vector<double> v = Array::uniform({3, channels, 9, 8}, 0, 4, 61, Dtype::float64).to_vector<double>();
  for (double& e : v) e = std::floor(e);
  v[5] = NAN;
  return Array::from_vector(v, {3, channels, 9, 8}).astype(dtype);
}

// What a check is of, for its messages.
std::string describe(Dtype dtype, const Pool2dGeometry& g, int64_t channels, bool channels_last) {
  return dtype_name(dtype) + " kernel " + std::to_string(g.kernel_h) + "x" + std::to_string(g.kernel_w) + " pad " +
         std::to_string(g.pad_h) + ", " + std::to_string(channels) + " channels" +
         (channels_last ? ", channels-last" : "");
}

// {1, 1, 2, 2, 1, 1} has windows wholly in padding (-inf, no winner, gather 0); the last two windows of 255
// and 256 elements, the largest whose winners the device keeps as a byte and the smallest it keeps as int32.
const std::vector<Pool2dGeometry> kGeometries = {{2, 2, 2, 2, 0, 0}, {3, 3, 2, 2, 1, 1}, {3, 2, 1, 2, 2, 1},
                                                 {1, 1, 1, 1, 0, 0}, {1, 1, 2, 2, 1, 1}, {15, 17, 1, 1, 3, 5},
                                                 {16, 16, 1, 1, 4, 4}};

}  // namespace

TEST_CASE("max and average pooling and their gradients equal the CPU's") {
  for (const Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    for (const Pool2dGeometry& g : kGeometries) {
      for (const int64_t channels : {4, 16}) {
        for (const bool channels_last : {false, true}) {
          if (channels == 16 && !channels_last) continue;  // row-major takes one element a thread whatever C is
          Array x = tied_values(channels, dtype);
          if (channels_last) x = in_order(x, MemoryOrder::channels_last);
          check_pooling(x, on_gpu(x), g, describe(dtype, g, channels, channels_last));
        }
      }
    }
  }
}

TEST_CASE("channels-last pooling of a view off a 16-byte boundary equals the CPU's") {
  for (const Dtype dtype : {Dtype::float32, Dtype::float16}) {
    const Array x = in_order(tied_values(16, dtype), MemoryOrder::channels_last);
    // The same elements in a device buffer one element further on: a channels-last view at offset 1.
    const Array buffer = on_gpu(Array::zeros({x.size() + 1}, dtype));
    const Array view = buffer.as_strided(x.shape(), x.strides(), 1);
    view.assign(on_gpu(x));
    REQUIRE(memory_order_of(view) == MemoryOrder::channels_last);
    for (const Pool2dGeometry& g : kGeometries) {
      check_pooling(x, view, g, describe(dtype, g, 16, true) + " at offset 1");
    }
  }
}

TEST_CASE("max pooling's winner at any offset of the largest byte-kept window and of an int32-kept one") {
  // One window over the whole plane; channel c's largest element at offsets[c] (the first, the middle, the
  // last: 254 as a byte, 255 as int32, the byte's "no winner").
  for (const Pool2dGeometry& g : {Pool2dGeometry{15, 17, 1, 1, 0, 0}, Pool2dGeometry{16, 16, 1, 1, 0, 0}}) {
    const int64_t size = g.kernel_h * g.kernel_w;
    const std::vector<int64_t> offsets = {0, 1, 127, 128, 129, 200, size - 2, size - 1};
    std::vector<double> v(offsets.size() * static_cast<size_t>(size), 0.0);
    for (size_t c = 0; c < offsets.size(); ++c) v[c * static_cast<size_t>(size) + static_cast<size_t>(offsets[c])] = 1;
    const Array x = Array::from_vector(v, {1, static_cast<int64_t>(offsets.size()), g.kernel_h, g.kernel_w});
    for (const Dtype dtype : {Dtype::float32, Dtype::float16}) {
      for (const bool channels_last : {false, true}) {
        const Array operand = channels_last ? in_order(x.astype(dtype), MemoryOrder::channels_last) : x.astype(dtype);
        check_pooling(operand, on_gpu(operand), g, describe(dtype, g, 8, channels_last) + ", winners at the ends");
      }
    }
  }
}

TEST_CASE("winners from another backend are refused naming it") {
  const Array x = Array::ones({1, 1, 4, 4});
  const MaxPool2dResult host = ops::max_pooling_2d(x, {2, 2, 2, 2, 0, 0}, {1, 1, 2, 2});
  CHECK_THROWS_AS(ops::max_pooling_2d_scatter(Array::ones({1, 1, 2, 2}, Dtype::float32, gpu), *host.winners, x.shape()),
                  DeviceError);
}
