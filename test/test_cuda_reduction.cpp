// The CUDA reductions against the CPU's: sum, max, min, argmax and argmin over every set of axes of a
// 3-D array, contiguous and transposed, in every dtype; few outputs of many elements, reduced in parts;
// arrays of many unit axes; NaN and ties; the top-k test. Sums agree to the
// rounding of a double accumulator summed in another order; the rest exactly.
// Part of test_cuda_device (its main skips without a GPU).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/routines.h>

#include "cuda_testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

const std::vector<Dtype> dtypes = {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16,
                                   Dtype::int32,   Dtype::int64,   Dtype::uint8,   Dtype::bool_};

}  // namespace

TEST_CASE("sum, amax and amin over every set of axes equal the CPU's") {
  const std::vector<std::vector<int64_t>> axis_sets = {{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (const Dtype dtype : dtypes) {
    const double lo = dtype == Dtype::uint8 || dtype == Dtype::bool_ ? 0 : -50;
    std::vector<double> v = Array::uniform({5, 6, 300}, lo, 50, 11, Dtype::float64).to_vector<double>();
    if (!is_floating(dtype)) {
      for (double& x : v) x = std::trunc(x);
    }
    const Array host = Array::from_vector(v, {5, 6, 300}).astype(dtype);
    const Array device = host.to(gpu);
    const double sum_tolerance = dtype == Dtype::float32   ? 1e-6
                                 : dtype == Dtype::float64 ? 1e-13
                                 : is_floating(dtype)      ? 1e-2
                                                           : 0;
    for (const auto& axes : axis_sets) {
      const std::string what = dtype_name(dtype) + " over " + std::to_string(axes.size()) + " axes";
      check_close(ops::sum(device, axes), ops::sum(host, axes), sum_tolerance, "sum, " + what);
      check_close(ops::amax(device, axes), ops::amax(host, axes), 0, "amax, " + what);
      check_close(ops::amin(device, axes, true), ops::amin(host, axes, true), 0, "amin keepdims, " + what);
      const Array t = host.transpose({2, 0, 1});
      check_close(ops::sum(device.transpose({2, 0, 1}), axes), ops::sum(t, axes), sum_tolerance,
                  "sum transposed, " + what);
    }
  }
}

TEST_CASE("reductions of many outputs over few elements (one thread each) equal the CPU's, channels-last included") {
  // A global average pooling's 7 x 7 windows of (N, C, 7, 7), channels-last and row-major; and a
  // reduction at the bounds of the per-thread path (1024 elements for each of 4096 outputs).
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
    bool channels_last;
  };
  const std::vector<Case> cases = {{{16, 512, 7, 7}, {2, 3}, true},
                                   {{16, 512, 7, 7}, {2, 3}, false},
                                   {{4096, 1024}, {1}, false},
                                   {{1024, 4096}, {0}, false}};
  for (const Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::bfloat16, Dtype::int32}) {
    for (const Case& c : cases) {
      INFO(dtype_name(dtype), " ", c.shape, c.channels_last ? " channels-last" : "");
      Array host = Array::uniform(c.shape, -50, 50, 21, Dtype::float64).astype(dtype);
      if (c.channels_last) host = in_order(host, MemoryOrder::channels_last);
      const Array device = in_order(host.to(gpu), memory_order_of(host));
      const double tolerance = dtype == Dtype::float32 ? 1e-6 : is_floating(dtype) ? 1e-2 : 0;
      check_close(ops::sum(device, c.axes), ops::sum(host, c.axes), tolerance, "sum");
      check_close(ops::amax(device, c.axes), ops::amax(host, c.axes), 0, "amax");
      check_close(ops::amin(device, c.axes), ops::amin(host, c.axes), 0, "amin");
    }
  }
}

TEST_CASE("reductions of few outputs over many elements (in parts) and of many unit axes equal the CPU's") {
  // A whole-array sum (one output: 1,024 blocks), three outputs of 400,000 elements each along either
  // axis, a strided view, and an array of 14 axes, 11 of them of extent 1 (3 after dropping them).
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
    bool transposed;
  };
  const std::vector<Case> cases = {{{3000001}, {0}, false},
                                   {{3, 400000}, {1}, false},
                                   {{400000, 3}, {0}, false},
                                   {{3, 400000}, {1}, true},
                                   {{2, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 5}, {0, 2, 13}, false}};
  for (const Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::int32}) {
    for (const Case& c : cases) {
      INFO(dtype_name(dtype), " ", c.shape, c.transposed ? " transposed" : "");
      Array host = Array::uniform(c.shape, -50, 50, 31, Dtype::float64).astype(dtype);
      Array device = host.to(gpu);
      if (c.transposed) {
        host = host.transpose().copy().transpose();  // (3, 400000) with the long axis outermost in memory
        device = device.transpose().copy().transpose();
      }
      const double tolerance = dtype == Dtype::float32 ? 1e-5 : is_floating(dtype) ? 1e-2 : 0;
      check_close(ops::sum(device, c.axes), ops::sum(host, c.axes), tolerance, "sum");
      check_close(ops::amax(device, c.axes), ops::amax(host, c.axes), 0, "amax");
      check_close(ops::amin(device, c.axes, true), ops::amin(host, c.axes, true), 0, "amin keepdims");
    }
  }
  // NaN anywhere in a part reaches the whole-array max and sum.
  Array with_nan = Array::uniform({3000001}, -1, 1, 32, Dtype::float32);
  with_nan.get_item({2999999}).assign(Array::scalar(std::nan("")).astype(Dtype::float32));
  CHECK(std::isnan(ops::amax(with_nan.to(gpu), {0}).item<double>()));
  CHECK(std::isnan(ops::sum(with_nan.to(gpu), {0}).item<double>()));
}

TEST_CASE("argmax and argmin take the first of equal values and the first NaN, as the CPU does") {
  const Array x = Array::from_vector<double>({3, 7, 7, 1, 1, -2,     //
                                              NAN, 2, NAN, 9, 0, 9,  //
                                              4, 4, 4, 4, 4, 4},
                                             {3, 6});
  for (const Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    CAPTURE(dtype);
    const Array host = x.astype(dtype), device = host.to(gpu);
    check_close(ops::argmax(device, 1), ops::argmax(host, 1), 0, "argmax rows");
    check_close(ops::argmin(device, 1), ops::argmin(host, 1), 0, "argmin rows");
    check_close(ops::argmax(device, 0), ops::argmax(host, 0), 0, "argmax columns");
    check_close(ops::argmax(device), ops::argmax(host), 0, "argmax of all");
  }
  // Many equal values across the threads of one block: still the first.
  const Array flat = Array::ones({5000}, Dtype::float32);
  CHECK(ops::argmax(flat.to(gpu)).item<int64_t>() == 0);
  const Array big = Array::uniform({4, 3000}, -1, 1, 12, Dtype::float32);
  check_close(ops::argmin(big.to(gpu), 1), ops::argmin(big, 1), 0, "argmin of long rows");
  check_close(ops::sum(Array::zeros({0, 3}).to(gpu), {0}), ops::sum(Array::zeros({0, 3}), {0}), 0, "sum over nothing");
}

TEST_CASE("the top-k test equals the CPU's, ties, NaN and labels out of range included") {
  std::vector<double> scores = Array::uniform({64, 10}, -1, 1, 13, Dtype::float64).to_vector<double>();
  scores[3 * 10 + 4] = NAN;
  scores[5 * 10 + 1] = scores[5 * 10 + 2];
  const Array x = Array::from_vector(scores, {64, 10});
  std::vector<int64_t> labels(64);
  for (int64_t i = 0; i < 64; ++i) labels[static_cast<size_t>(i)] = i % 12 - 1;  // -1 and 10 are outside
  labels[3] = 4;
  labels[5] = 2;
  const Array t = Array::from_vector(labels, {64});
  for (const Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    for (const int64_t k : {1, 3, 10}) {
      CAPTURE(dtype);
      CAPTURE(k);
      const Array host = x.astype(dtype);
      check_close(ops::top_k_hits(host.to(gpu), t.to(gpu), k), ops::top_k_hits(host, t, k), 0, "top_k_hits");
      const Array column_major = host.to(gpu).transpose().copy().transpose();  // strides (1, 64)
      check_close(ops::top_k_hits(column_major, t.to(gpu), k), ops::top_k_hits(host, t, k), 0, "top_k_hits strided");
    }
  }
}
