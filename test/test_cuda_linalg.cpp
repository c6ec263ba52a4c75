// The CUDA matrix product (cuBLASLt) against the CPU's: every floating dtype, both transposes, operands
// and outputs of any layout (column-major, sliced, broadcast rows), alpha and beta, k = 0, sizes from
// 1 to a few hundred. float64 and float32 agree to their own rounding (no TF32); float16 and bfloat16,
// accumulated in float32 on both, to a few of their units.
// Part of test_cuda_device (its main skips without a GPU).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/linalg.h>
#include <kusari/kernels/routines.h>

#include "cuda_testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

constexpr auto none = std::nullopt;

// The tolerance of a product of depth k, relative to the largest magnitude of the host's result.
double tolerance(Dtype dtype, int64_t k) {
  const double depth = std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
  switch (dtype) {
    case Dtype::float64:
      return 1e-14 * depth;
    case Dtype::float32:
      return 1e-6 * depth;
    case Dtype::float16:
      return 2e-3;
    default:
      return 1.6e-2;  // bfloat16
  }
}

}  // namespace

TEST_CASE("matmul equals the CPU's for every floating dtype, transpose and size") {
  const std::vector<std::array<int64_t, 3>> sizes = {
      {1, 1, 1}, {3, 5, 7}, {64, 64, 64}, {33, 129, 250}, {256, 10, 512}};
  for (const Dtype dtype : {Dtype::float64, Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
    for (const auto& [m, n, k] : sizes) {
      for (const bool ta : {false, true}) {
        for (const bool tb : {false, true}) {
          const Array a = Array::uniform(ta ? Shape{k, m} : Shape{m, k}, -1, 1, 21, Dtype::float32).astype(dtype);
          const Array b = Array::uniform(tb ? Shape{n, k} : Shape{k, n}, -1, 1, 22, Dtype::float32).astype(dtype);
          const std::string what = dtype_name(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                                   std::to_string(k) + (ta ? " a^T" : "") + (tb ? " b^T" : "");
          check_close(ops::matmul(a.to(gpu), b.to(gpu), ta, tb), ops::matmul(a, b, ta, tb), tolerance(dtype, k), what,
                      Relative::to_largest);
        }
      }
    }
  }
}

TEST_CASE("operands and outputs of any layout: column-major, sliced, copied where no axis is unit-stride") {
  const Array a = Array::uniform({40, 30}, -1, 1, 23, Dtype::float32);
  const Array b = Array::uniform({30, 20}, -1, 1, 24, Dtype::float32);
  const Array expected = ops::matmul(a, b);
  const Array column_major_a = a.to(gpu).transpose().copy().transpose();
  check_close(ops::matmul(column_major_a, b.to(gpu)), expected, 1e-5, "column-major a", Relative::to_largest);
  const Array wide = Array::uniform({30, 40}, -1, 1, 25, Dtype::float32);
  const Array sliced_b = wide.get_item({Slice{}, Slice{5, 25}});  // rows 40 apart
  check_close(ops::matmul(a.to(gpu), wide.to(gpu).get_item({Slice{}, Slice{5, 25}})), ops::matmul(a, sliced_b), 1e-5,
              "sliced b", Relative::to_largest);
  const Array every_other = Array::uniform({80, 60}, -1, 1, 26, Dtype::float32);
  const Array strided = every_other.get_item({Slice{none, none, 2}, Slice{none, none, 2}});  // no unit stride
  check_close(ops::matmul(every_other.to(gpu).get_item({Slice{none, none, 2}, Slice{none, none, 2}}), b.to(gpu)),
              ops::matmul(strided, b), 1e-5, "no unit stride", Relative::to_largest);
}

TEST_CASE("alpha, beta and k = 0 follow BLAS: out is not read when beta is 0") {
  const auto gemm_cpu = kernel_for<kernel_ops::Gemm>(Device::cpu());
  const auto gemm_gpu = kernel_for<kernel_ops::Gemm>(gpu);
  const Array a = Array::uniform({8, 6}, -1, 1, 27, Dtype::float32),
              b = Array::uniform({6, 5}, -1, 1, 28, Dtype::float32);
  const Array c = Array::uniform({8, 5}, -1, 1, 29, Dtype::float32);
  const Array host = c.copy(), device = c.to(gpu);
  gemm_cpu(a, false, b, false, 0.5, -2.0, host);
  gemm_gpu(a.to(gpu), false, b.to(gpu), false, 0.5, -2.0, device);
  check_close(device, host, 1e-6, "alpha 0.5, beta -2", Relative::to_largest);
  const Array nans = Array::full({8, 5}, NAN, Dtype::float32, gpu);
  gemm_gpu(a.to(gpu), false, b.to(gpu), false, 1.0, 0.0, nans);
  check_close(nans, ops::matmul(a, b), 1e-6, "beta 0 over NaN", Relative::to_largest);
  const Array empty_a = Array::zeros({8, 0}, Dtype::float32, gpu), empty_b = Array::zeros({0, 5}, Dtype::float32, gpu);
  const Array scaled = c.to(gpu);
  gemm_gpu(empty_a, false, empty_b, false, 1.0, 3.0, scaled);
  check_close(scaled, ops::mul(c, Array::scalar(3.0, Dtype::float32)), 0, "k = 0 scales out by beta",
              Relative::to_largest);
}

TEST_CASE("integer operands are refused with the dtype named") {
  const Array a = Array::ones({2, 2}, Dtype::int32, gpu);
  CHECK_THROWS_WITH_AS(ops::matmul(a, a), doctest::Contains("int32"), DtypeError);
}
