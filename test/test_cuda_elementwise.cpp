// The CUDA elementwise kernels against the CPU's: every unary and binary operation on every dtype it is
// defined for, contiguous (of any length and alignment), strided and broadcast operands, where, axpby and
// the momentum step. Exact where both backends round the same IEEE operation (arithmetic, comparisons,
// sqrt, division); within a few units in the last place where the device's libm computes a
// transcendental function.
// Part of test_cuda_device (its main skips without a GPU).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/kernels/routines.h>

using namespace kusari;

namespace {

const Device gpu = Device::cuda(0);

const std::vector<Dtype> floating = {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16};
const std::vector<Dtype> integers = {Dtype::int32, Dtype::int64, Dtype::uint8};

// Values in (lo, hi) with a few exact zeros, as dtype, on the host.
Array values_in(const Shape& shape, double lo, double hi, uint64_t seed, Dtype dtype) {
  std::vector<double> v = Array::uniform(shape, lo, hi, seed, Dtype::float64).to_vector<double>();
  for (size_t i = 0; i < v.size(); i += 7) v[i] = 0.0;
  if (!is_floating(dtype)) {
    for (double& x : v) x = std::trunc(x);
  }
  return Array::from_vector(v, shape).astype(dtype);
}

// Units in the last place the device may differ by: 0 for operations IEEE rounds exactly; for the
// transcendental ones CUDA's documented bounds (up to 4 units for powf) plus glibc's own error.
double allowed_ulps(bool transcendental, Dtype dtype) {
  if (!transcendental) return 0;
  return dtype == Dtype::float16 || dtype == Dtype::bfloat16 ? 1 : 8;
}

// The spacing of dtype's values near |x|.
double ulp_at(double x, Dtype dtype) {
  const int bits = dtype == Dtype::float64 ? 53 : dtype == Dtype::float32 ? 24 : dtype == Dtype::float16 ? 11 : 8;
  const double a = std::max(std::fabs(x), dtype == Dtype::float16 ? 6.1e-5 : 1e-30);
  return std::ldexp(1.0, std::ilogb(a) - bits + 1);
}

// Checks the device's result against the host's: same dtype and shape, every element within `ulps`
// units in the last place of the larger of |host| and 1 (results below 1 inherit the absolute error of
// the terms they were computed from: sigmoid's 0.5·tanh + 0.5), NaN where the host has NaN, equal
// infinities.
void check_close(const Array& device_result, const Array& host_result, double ulps, const std::string& what) {
  INFO(what);
  REQUIRE(device_result.device() == gpu);
  const Array d = device_result.to(Device::cpu());
  REQUIRE(d.dtype() == host_result.dtype());
  REQUIRE(d.shape() == host_result.shape());
  const std::vector<double> got = d.to_vector<double>(), want = host_result.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element ", i, ": device ", got[i], ", host ", want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else if (ulps == 0 || std::isinf(want[i])) {
      CHECK((got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i])));
    } else {
      CHECK(std::fabs(got[i] - want[i]) <= ulps * ulp_at(std::max(std::fabs(want[i]), 1.0), d.dtype()));
    }
  }
}

struct UnaryCase {
  std::string name;
  std::function<Array(const Array&)> op;
  double lo, hi;
  bool transcendental, integers_too;
};

const std::vector<UnaryCase> unary_cases = {
    {"neg", [](const Array& x) { return ops::neg(x); }, -5, 5, false, true},
    {"abs", [](const Array& x) { return ops::abs(x); }, -5, 5, false, true},
    {"square", [](const Array& x) { return ops::square(x); }, -5, 5, false, true},
    {"sign", [](const Array& x) { return ops::sign(x); }, -5, 5, false, true},
    {"relu", [](const Array& x) { return ops::relu(x); }, -5, 5, false, true},
    {"logical_not", [](const Array& x) { return ops::logical_not(x); }, -2, 2, false, true},
    {"sqrt", [](const Array& x) { return ops::sqrt(x); }, 0, 50, false, false},
    {"reciprocal", [](const Array& x) { return ops::reciprocal(x); }, -4, 4, false, false},
    {"leaky_relu", [](const Array& x) { return ops::leaky_relu(x, 0.25); }, -5, 5, false, false},
    {"exp", [](const Array& x) { return ops::exp(x); }, -8, 8, true, false},
    {"log", [](const Array& x) { return ops::log(x); }, 0, 50, true, false},
    {"sigmoid", [](const Array& x) { return ops::sigmoid(x); }, -8, 8, true, false},
    {"tanh", [](const Array& x) { return ops::tanh(x); }, -4, 4, true, false},
    {"elu", [](const Array& x) { return ops::elu(x, 1.5); }, -5, 5, true, false},
    {"power", [](const Array& x) { return ops::power(x, 1.7); }, 0, 9, true, false},
};

struct BinaryCase {
  std::string name;
  std::function<Array(const Array&, const Array&)> op;
  bool transcendental;
};

const std::vector<BinaryCase> binary_cases = {
    {"add", ops::add, false},
    {"sub", ops::sub, false},
    {"mul", ops::mul, false},
    {"div", ops::div, false},
    {"maximum", ops::maximum, false},
    {"minimum", ops::minimum, false},
    {"relu_grad", ops::relu_grad, false},
    {"add_relu", ops::add_relu, false},
    {"equal", ops::equal, false},
    {"not_equal", ops::not_equal, false},
    {"less", ops::less, false},
    {"less_equal", ops::less_equal, false},
    {"greater", ops::greater, false},
    {"greater_equal", ops::greater_equal, false},
    {"power", [](const Array& a, const Array& b) { return ops::power(ops::abs(a), b); }, true},
};

}  // namespace

TEST_CASE("every unary operation equals the CPU's, on contiguous and strided operands") {
  std::vector<Dtype> dtypes = floating;
  dtypes.insert(dtypes.end(), integers.begin(), integers.end());
  for (const UnaryCase& c : unary_cases) {
    for (const Dtype dtype : dtypes) {
      const bool integer = dtype == Dtype::int32 || dtype == Dtype::int64 || dtype == Dtype::uint8;
      if (integer && !c.integers_too) continue;
      const double lo = dtype == Dtype::uint8 ? 0 : c.lo;
      const Array host = values_in({13, 21}, lo, c.hi, 3, dtype);
      const Array device = host.to(gpu);
      const std::string what = c.name + " on " + dtype_name(dtype);
      check_close(c.op(device), c.op(host), allowed_ulps(c.transcendental, dtype), what);
      check_close(c.op(device.transpose()), c.op(host.transpose()), allowed_ulps(c.transcendental, dtype),
                  what + ", transposed");
    }
  }
  const Array flags = Array::from_vector<bool>({true, false, false, true}, {4});
  check_close(ops::logical_not(flags.to(gpu)), ops::logical_not(flags), 0, "logical_not on bool");
}

TEST_CASE("an operation a dtype does not have is refused on the device as on the CPU") {
  const Array ints = Array::ones({3}, Dtype::int32, gpu);
  CHECK_THROWS_AS(ops::exp(ints), DtypeError);
  CHECK_THROWS_AS(ops::neg(Array::ones({3}, Dtype::bool_, gpu)), DtypeError);
}

TEST_CASE("every binary operation equals the CPU's, with broadcast and strided operands") {
  std::vector<Dtype> dtypes = floating;
  dtypes.insert(dtypes.end(), integers.begin(), integers.end());
  for (const BinaryCase& c : binary_cases) {
    for (const Dtype dtype : dtypes) {
      const bool integer = dtype == Dtype::int32 || dtype == Dtype::int64 || dtype == Dtype::uint8;
      if (integer && c.transcendental) continue;
      const double lo = dtype == Dtype::uint8 ? 0 : -6;
      const Array a = values_in({9, 16}, lo, 6, 5, dtype), b = values_in({9, 16}, lo, 6, 6, dtype);
      const Array row = values_in({1, 16}, lo, 6, 7, dtype);
      const std::string what = c.name + " on " + dtype_name(dtype);
      const double ulps = allowed_ulps(c.transcendental, dtype);
      check_close(c.op(a.to(gpu), b.to(gpu)), c.op(a, b), ulps, what);
      check_close(c.op(a.to(gpu), row.to(gpu)), c.op(a, row), ulps, what + ", a row broadcast");
      check_close(c.op(a.to(gpu).transpose(), b.to(gpu).transpose()), c.op(a.transpose(), b.transpose()), ulps,
                  what + ", transposed");
    }
  }
}

TEST_CASE("contiguous operands of any length and alignment equal the CPU's (16-byte loads and their tails)") {
  std::vector<Dtype> dtypes = floating;
  dtypes.insert(dtypes.end(), integers.begin(), integers.end());
  for (const Dtype dtype : dtypes) {
    CAPTURE(dtype);
    const Array a = values_in({1003}, -6, 6, 11, dtype), b = values_in({1003}, -6, 6, 12, dtype);
    for (const int64_t start : {0, 1, 3}) {
      for (const int64_t stop : {1003, 1000, 16, 5}) {
        CAPTURE(start);
        CAPTURE(stop);
        const Array ha = a.get_item({Slice{start, stop}}), hb = b.get_item({Slice{start, stop}});
        const Array da = a.to(gpu).get_item({Slice{start, stop}}), db = b.to(gpu).get_item({Slice{start, stop}});
        check_close(ops::add(da, db), ops::add(ha, hb), 0, "add");
        check_close(ops::greater(da, db), ops::greater(ha, hb), 0, "greater (bool)");
        check_close(ops::abs(da), ops::abs(ha), 0, "abs");
        if (is_floating(dtype)) check_close(ops::relu_grad(da, db), ops::relu_grad(ha, hb), 0, "relu_grad");
      }
    }
  }
}

TEST_CASE("where, axpby and the momentum step equal the CPU's") {
  for (const Dtype dtype : floating) {
    CAPTURE(dtype);
    const Array a = values_in({7, 11}, -3, 3, 8, dtype), b = values_in({7, 11}, -3, 3, 9, dtype);
    const Array cond = ops::greater(a, b);
    check_close(ops::where(cond.to(gpu), a.to(gpu), b.to(gpu)), ops::where(cond, a, b), 0, "where");

    const Array host_dst = a.copy(), device_dst = a.to(gpu);
    ops::axpby(host_dst, 0.9, b, -0.25);
    ops::axpby(device_dst, 0.9, b.to(gpu), -0.25);
    // Both may fuse the multiply-add (one rounding) or not (two): one unit in the last place apart.
    check_close(device_dst, host_dst, 1, "axpby");

    const Array w = a.copy(), v = b.copy(), g = values_in({7, 11}, -1, 1, 10, dtype);
    const Array dw = w.to(gpu), dv = v.to(gpu);
    for (int step = 0; step < 3; ++step) {
      ops::momentum_step(w, v, g, 0.9, 0.1);
      ops::momentum_step(dw, dv, g.to(gpu), 0.9, 0.1);
    }
    check_close(dv, v, 4, "momentum_step velocity");
    check_close(dw, w, 4, "momentum_step weights");
  }
}

TEST_CASE("operands on different devices are refused naming both") {
  const Array on_gpu = Array::ones({4}, Dtype::float32, gpu);
  const Array on_host = Array::ones({4}, Dtype::float32);
  try {
    ops::add(on_gpu, on_host);
    FAIL("expected DeviceError");
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    CHECK(what.find("cuda:0") != std::string::npos);
    CHECK(what.find("cpu") != std::string::npos);
  }
}
