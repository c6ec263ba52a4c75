// The CUDA pooling against the CPU's: max pooling (values, the winners through scatter and gather,
// ties and NaN), average pooling and both gradients, for windows with strides and padding (a window
// wholly in padding too), row-major and channels-last inputs (results in the input's order), every
// floating dtype.
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

}  // namespace

TEST_CASE("max and average pooling and their gradients equal the CPU's") {
  // The last geometry has windows wholly in padding (-inf, no winner, gather 0).
  const std::vector<Pool2dGeometry> geometries = {
      {2, 2, 2, 2, 0, 0}, {3, 3, 2, 2, 1, 1}, {3, 2, 1, 2, 2, 1}, {1, 1, 1, 1, 0, 0}, {1, 1, 2, 2, 1, 1}};
  for (const Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    for (const Pool2dGeometry& g : geometries) {
      for (const bool channels_last : {false, true}) {
        const std::string what = dtype_name(dtype) + " kernel " + std::to_string(g.kernel_h) + "x" +
                                 std::to_string(g.kernel_w) + " pad " + std::to_string(g.pad_h) +
                                 (channels_last ? ", channels-last" : "");
        // Integers in [0, 4): many ties, so the first-of-equals rule matters.
        std::vector<double> v = Array::uniform({3, 4, 9, 8}, 0, 4, 61, Dtype::float64).to_vector<double>();
        for (double& e : v) e = std::floor(e);
        v[5] = NAN;
        Array x = Array::from_vector(v, {3, 4, 9, 8}).astype(dtype);
        if (channels_last) x = in_order(x, MemoryOrder::channels_last);
        const Shape y_shape{3, 4, pooled(9, g.kernel_h, g.stride_h, g.pad_h),
                            pooled(8, g.kernel_w, g.stride_w, g.pad_w)};
        const Array gy = Array::normal(y_shape, 0, 1, 62, dtype);
        const MaxPool2dResult host = ops::max_pooling_2d(x, g, y_shape);
        const MaxPool2dResult device = ops::max_pooling_2d(on_gpu(x), g, y_shape);
        check_close(device.y, host.y, 0, "max, " + what);
        // Channels-last stays channels-last, read and written in place (no row-major copy on the device).
        CHECK(memory_order_of(device.y) == memory_order_of(x));
        CHECK(memory_order_of(ops::average_pooling_2d(on_gpu(x), g, y_shape)) == memory_order_of(x));
        check_close(ops::max_pooling_2d_scatter(on_gpu(gy), *device.winners, x.shape()),
                    ops::max_pooling_2d_scatter(gy, *host.winners, x.shape()), 1e-6, "max scatter, " + what);
        const Array other = Array::normal(x.shape(), 0, 1, 63, dtype);
        check_close(ops::max_pooling_2d_gather(on_gpu(other), *device.winners),
                    ops::max_pooling_2d_gather(other, *host.winners), 0, "max gather, " + what);
        const double tolerance = dtype == Dtype::float64 ? 1e-14 : dtype == Dtype::float32 ? 1e-6 : 1e-2;
        check_close(ops::average_pooling_2d(on_gpu(x), g, y_shape), ops::average_pooling_2d(x, g, y_shape), tolerance,
                    "average, " + what);
        check_close(ops::average_pooling_2d_backward(on_gpu(gy), g, x.shape()),
                    ops::average_pooling_2d_backward(gy, g, x.shape()), tolerance, "average backward, " + what);
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
