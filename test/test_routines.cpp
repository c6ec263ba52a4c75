// kusari::ops against references computed here element by element: elementwise operations with
// broadcasting and strided operands, reductions (both loop orders of the CPU kernel), matmul,
// concatenate, and the thread-count independence of the parallel paths.

#include <array>
#include <cmath>
#include <functional>
#include <tuple>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/convolution.h>
#include <kusari/kernels/ops/copy.h>
#include <kusari/kernels/ops/linalg.h>
#include <kusari/kernels/ops/reduction.h>
#include <kusari/kernels/cuda/runtime.h>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

constexpr auto none = std::nullopt;

std::vector<double> values(const Array& a) { return a.to_vector<double>(); }

// Row-major values of x broadcast to `shape`.
std::vector<double> broadcast_values(const Array& x, const Shape& shape) {
  return values(x.broadcast_to(shape));
}

// f applied to the broadcast values of a and b.
std::vector<double> reference_binary(const Array& a, const Array& b, const std::function<double(double, double)>& f) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), "reference");
  const std::vector<double> x = broadcast_values(a, shape), y = broadcast_values(b, shape);
  std::vector<double> out;
  for (size_t i = 0; i < x.size(); ++i) out.push_back(f(x[i], y[i]));
  return out;
}

// f applied to every value of x.
std::vector<double> reference_unary(const Array& x, const std::function<double(double)>& f) {
  std::vector<double> out;
  for (double v : values(x)) out.push_back(f(v));
  return out;
}

// Asserts equal values within atol + rtol * |expected|, NaN matching NaN and infinities matching exactly.
void expect_values_nan(const Array& a, const std::vector<double>& expected, double atol = 0, double rtol = 0) {
  const std::vector<double> x = values(a);
  REQUIRE(x.size() == expected.size());
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("flat element ", i, ": ", x[i], " vs ", expected[i]);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(x[i]));
    } else if (std::isinf(expected[i])) {
      CHECK(x[i] == expected[i]);
    } else {
      CHECK(std::abs(x[i] - expected[i]) <= atol + rtol * std::abs(expected[i]));
    }
  }
}

// 24 distinct small integers in a (2, 3, 4) array, so sums are exact in every dtype and maxima unique.
Array distinct_2x3x4(Dtype dtype) {
  std::vector<double> v;
  for (int i = 0; i < 24; ++i) v.push_back((i * 7) % 24 - 11);
  return Array::from_vector(v, {2, 3, 4}, dtype);
}

// The reduction of x's values over `axes` (normalised, sorted), computed by walking every index.
std::vector<double> reference_reduce(const Array& x, const std::vector<int64_t>& axes, ReduceOp op) {
  const std::vector<double> in = values(x);
  const Shape& shape = x.shape();
  const Shape out_shape = ops::reduced_shape(shape, axes, false);
  const Strides out_strides = contiguous_strides(out_shape);
  const size_t count = static_cast<size_t>(out_shape.numel());
  std::vector<double> acc(count, op == ReduceOp::sum ? 0 : NAN), arg(count, 0);
  std::vector<int64_t> index(static_cast<size_t>(shape.ndim()), 0);
  for (size_t flat = 0; flat < in.size(); ++flat) {
    size_t out = 0, k = 0;
    int64_t position = 0;  // along the reduced axes, row-major
    for (int64_t d = 0; d < shape.ndim(); ++d) {
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
        out += static_cast<size_t>(index[static_cast<size_t>(d)] * out_strides[k++]);
      } else {
        position = position * shape[d] + index[static_cast<size_t>(d)];
      }
    }
    const double v = in[flat];
    double& a = acc[out];
    const bool first = position == 0;
    switch (op) {
      case ReduceOp::sum: a += v; break;
      case ReduceOp::max: a = first || v > a ? v : a; break;
      case ReduceOp::min: a = first || v < a ? v : a; break;
      case ReduceOp::argmax: if (first || v > a) { a = v; arg[out] = static_cast<double>(position); } break;
      case ReduceOp::argmin: if (first || v < a) { a = v; arg[out] = static_cast<double>(position); } break;
    }
    for (int64_t d = shape.ndim() - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < shape[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return op == ReduceOp::argmax || op == ReduceOp::argmin ? arg : acc;
}

// Every subset of the axes of an ndim-dimensional array, written with negative axes for variety.
std::vector<std::vector<int64_t>> axis_subsets(int64_t ndim) {
  std::vector<std::vector<int64_t>> subsets;
  for (int64_t mask = 1; mask < (int64_t{1} << ndim); ++mask) {
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < ndim; ++d) {
      if (mask & (int64_t{1} << d)) axes.push_back(mask % 2 ? d : d - ndim);
    }
    subsets.push_back(axes);
  }
  return subsets;
}

// Normalised and sorted axes.
std::vector<int64_t> normalized(std::vector<int64_t> axes, int64_t ndim) {
  for (int64_t& a : axes) a = a < 0 ? a + ndim : a;
  std::sort(axes.begin(), axes.end());
  return axes;
}

// Naive batched matrix product of a (..., m, k) and b (..., k, n) with broadcast batch axes, in double.
std::vector<double> reference_matmul(const Array& a, const Array& b) {
  const int64_t m = a.shape()[a.ndim() - 2], k = a.shape()[a.ndim() - 1], n = b.shape()[b.ndim() - 1];
  const Shape batch = broadcast_shapes(Shape(std::vector<int64_t>(a.shape().begin(), a.shape().end() - 2)),
                                       Shape(std::vector<int64_t>(b.shape().begin(), b.shape().end() - 2)), "ref");
  std::vector<int64_t> da = batch.dims(), db = batch.dims();
  da.insert(da.end(), {m, k});
  db.insert(db.end(), {k, n});
  const std::vector<double> x = broadcast_values(a, Shape(da)), y = broadcast_values(b, Shape(db));
  std::vector<double> out;
  for (int64_t p = 0; p < batch.numel(); ++p) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l) s += x[static_cast<size_t>((p * m + i) * k + l)] * y[static_cast<size_t>((p * k + l) * n + j)];
        out.push_back(s);
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("elementwise arithmetic broadcasts like NumPy") {
  const Array a = Array::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}, Dtype::float32);
  const Array row = Array::from_vector<double>({10, 20, 30}, {3}, Dtype::float32);
  const Array column = Array::from_vector<double>({100, 200}, {2, 1}, Dtype::float32);
  expect_values(ops::add(a, row), {11, 22, 33, 14, 25, 36});
  expect_values(ops::sub(a, column), {-99, -98, -97, -196, -195, -194});
  expect_values(ops::mul(row, column), {1000, 2000, 3000, 2000, 4000, 6000});
  expect_values(ops::div(a, Array::scalar(2)), {0.5, 1, 1.5, 2, 2.5, 3});
  CHECK(ops::add(row.expand_dims(0).expand_dims(0), column).shape() == Shape{1, 2, 3});
  expect_values(a + 1.0, {2, 3, 4, 5, 6, 7});
  expect_values(2.0 * a - 1.0, {1, 3, 5, 7, 9, 11});
  expect_values(a / 4.0, {0.25, 0.5, 0.75, 1, 1.25, 1.5});
  expect_values(-a, {-1, -2, -3, -4, -5, -6});
  CHECK(ops::add(Array::zeros({0, 3}), row).shape() == Shape{0, 3});
}

TEST_CASE("elementwise operations read strided, transposed and reversed operands") {
  const Array x = random({4, 6}, 1, Dtype::float32);
  const Array y = random({6, 4}, 2, Dtype::float32);
  const Array reversed = y.get_item({Slice{none, none, -1}, Slice{none, none, 2}});  // (6, 2), negative stride
  const std::vector<std::pair<Array, Array>> pairs = {
      {x, y.transpose()},
      {x.transpose(), y},
      {x.get_item({Slice{none, none, 2}, Slice{1, none, 2}}), y.get_item({Slice{1, 3}, Slice{0, 3}})},
      {reversed, x.get_item({Slice{2, 3}, Slice{none, none, 3}})},
      {x.transpose().get_item({Slice{none, none, -1}}), Array::scalar(0.5)},
  };
  for (const auto& entry : pairs) {
    const auto& a = std::get<0>(entry);
    const auto& b = std::get<1>(entry);
    INFO("shapes ", a.shape(), " and ", b.shape());
    expect_values_nan(ops::add(a, b), reference_binary(a, b, std::plus<>()), 1e-6, 1e-6);
    expect_values_nan(ops::mul(b, a), reference_binary(b, a, std::multiplies<>()), 1e-6, 1e-6);
    expect_values_nan(ops::maximum(a, b), reference_binary(a, b, [](double p, double q) { return std::max(p, q); }));
    CHECK(ops::less(a, b).to_vector<bool>() ==
          [&] {
            std::vector<bool> e;
            for (double v : reference_binary(a, b, std::less<>())) e.push_back(v != 0);
            return e;
          }());
  }
  // The output of an in-place add may itself be a strided view.
  const Array target = Array::zeros({4, 6});
  ops::add_to(target.transpose().get_item({Slice{none, none, 2}}), Array::ones({4}));
  expect_values(target.get_item({0}), {1, 0, 1, 0, 1, 0});
}

TEST_CASE("every unary operation on float32, also through a transposed view") {
  const Array x = Array::from_vector<double>({-2.5, -1, -0.25, 0.5, 1, 3}, {2, 3}, Dtype::float32).transpose();
  const Array positive = Array::from_vector<double>({0.25, 0.5, 1, 2, 4, 9}, {3, 2}, Dtype::float32);
  struct Case {
    std::function<Array(const Array&)> op;
    std::function<double(double)> reference;
    const Array* input;
  };
  const std::vector<std::pair<std::string, Case>> cases = {
      {"neg", {[](const Array& a) { return ops::neg(a); }, [](double v) { return -v; }, &x}},
      {"exp", {[](const Array& a) { return ops::exp(a); }, [](double v) { return std::exp(v); }, &x}},
      {"log", {[](const Array& a) { return ops::log(a); }, [](double v) { return std::log(v); }, &positive}},
      {"sqrt", {[](const Array& a) { return ops::sqrt(a); }, [](double v) { return std::sqrt(v); }, &positive}},
      {"square", {[](const Array& a) { return ops::square(a); }, [](double v) { return v * v; }, &x}},
      {"abs", {[](const Array& a) { return ops::abs(a); }, [](double v) { return std::fabs(v); }, &x}},
      {"sign", {[](const Array& a) { return ops::sign(a); }, [](double v) { return double((v > 0) - (v < 0)); }, &x}},
      {"reciprocal", {[](const Array& a) { return ops::reciprocal(a); }, [](double v) { return 1 / v; }, &x}},
      {"sigmoid", {[](const Array& a) { return ops::sigmoid(a); }, [](double v) { return 1 / (1 + std::exp(-v)); }, &x}},
      {"tanh", {[](const Array& a) { return ops::tanh(a); }, [](double v) { return std::tanh(v); }, &x}},
      {"relu", {[](const Array& a) { return ops::relu(a); }, [](double v) { return std::max(v, 0.0); }, &x}},
      {"leaky_relu", {[](const Array& a) { return ops::leaky_relu(a, 0.2); }, [](double v) { return v > 0 ? v : 0.2 * v; }, &x}},
      {"elu", {[](const Array& a) { return ops::elu(a, 1.5); }, [](double v) { return v > 0 ? v : 1.5 * std::expm1(v); }, &x}},
      {"power", {[](const Array& a) { return ops::power(a, 1.5); }, [](double v) { return std::pow(v, 1.5); }, &positive}},
  };
  for (const auto& entry : cases) {
    const auto& name = std::get<0>(entry);
    const auto& c = std::get<1>(entry);
    INFO(name);
    const Array y = c.op(*c.input);
    CHECK(y.dtype() == Dtype::float32);
    CHECK(y.shape() == c.input->shape());
    expect_values_nan(y, reference_unary(*c.input, c.reference), 1e-6, 1e-6);
  }
  const Array n = ops::logical_not(x);
  CHECK(n.dtype() == Dtype::bool_);
  CHECK(n.to_vector<bool>() == std::vector<bool>(6, false));
  CHECK(ops::logical_not(Array::zeros({2})).to_vector<bool>() == std::vector<bool>{true, true});
}

TEST_CASE("unary operations keep NaN and signed zero straight") {
  const Array special = Array::from_vector<double>({NAN, -0.0, 0.0, -INFINITY}, {4}, Dtype::float32);
  expect_values_nan(ops::sign(special), {NAN, 0, 0, -1});
  expect_values_nan(ops::relu(special), {NAN, 0, 0, 0});
  expect_values_nan(ops::abs(special), {NAN, 0, 0, INFINITY});
  CHECK_FALSE(std::signbit(values(ops::abs(special))[1]));
  expect_values_nan(ops::exp(special), {NAN, 1, 1, 0});
  CHECK(ops::logical_not(special).to_vector<bool>() == std::vector<bool>{false, true, true, false});
}

TEST_CASE("integer unary operations, and floating-only ones reject integers") {
  const Array x = Array::from_vector<int32_t>({-3, 0, 5, -7, 2, 1}, {3, 2}).transpose();
  expect_values(ops::neg(x), reference_unary(x, [](double v) { return -v; }));
  expect_values(ops::square(x), reference_unary(x, [](double v) { return v * v; }));
  expect_values(ops::abs(x), reference_unary(x, [](double v) { return std::fabs(v); }));
  expect_values(ops::sign(x), reference_unary(x, [](double v) { return double((v > 0) - (v < 0)); }));
  expect_values(ops::relu(x), reference_unary(x, [](double v) { return std::max(v, 0.0); }));
  CHECK(ops::relu(x).dtype() == Dtype::int32);
  CHECK(ops::logical_not(x).to_vector<bool>() == std::vector<bool>{false, false, false, true, false, false});
  expect_values(ops::relu(Array::from_vector<uint8_t>({0, 200}, {2})), {0, 200});
  for (const auto& entry : std::vector<std::pair<std::string, std::function<Array(const Array&)>>>{
           {"exp", [](const Array& a) { return ops::exp(a); }},
           {"log", [](const Array& a) { return ops::log(a); }},
           {"sqrt", [](const Array& a) { return ops::sqrt(a); }},
           {"reciprocal", [](const Array& a) { return ops::reciprocal(a); }},
           {"sigmoid", [](const Array& a) { return ops::sigmoid(a); }},
           {"tanh", [](const Array& a) { return ops::tanh(a); }},
           {"leaky_relu", [](const Array& a) { return ops::leaky_relu(a, 0.1); }},
           {"elu", [](const Array& a) { return ops::elu(a, 1); }},
           {"power", [](const Array& a) { return ops::power(a, 2.0); }}}) {
    const auto& name = std::get<0>(entry);
    const auto& op = std::get<1>(entry);
    expect_error<DtypeError>([&, op = op] { op(x); }, {name, "floating", "int32"});
  }
  expect_error<DtypeError>([] { ops::neg(Array::zeros({2}, Dtype::bool_)); }, {"neg", "numeric", "bool"});
  expect_error<ValueError>([] { ops::exp(Array()); }, {"exp", "undefined"});
}

TEST_CASE("every binary operation on float32 and int32") {
  const std::vector<std::pair<std::string, std::pair<std::function<Array(const Array&, const Array&)>,
                                                   std::function<double(double, double)>>>>
      cases = {
          {"add", {ops::add, std::plus<>()}},
          {"sub", {ops::sub, std::minus<>()}},
          {"mul", {ops::mul, std::multiplies<>()}},
          {"maximum", {ops::maximum, [](double p, double q) { return std::max(p, q); }}},
          {"minimum", {ops::minimum, [](double p, double q) { return std::min(p, q); }}},
          {"equal", {ops::equal, std::equal_to<>()}},
          {"not_equal", {ops::not_equal, std::not_equal_to<>()}},
          {"less", {ops::less, std::less<>()}},
          {"less_equal", {ops::less_equal, std::less_equal<>()}},
          {"greater", {ops::greater, std::greater<>()}},
          {"greater_equal", {ops::greater_equal, std::greater_equal<>()}},
      };
  for (Dtype dtype : {Dtype::float32, Dtype::int32}) {
    const Array a = Array::from_vector<double>({-3, 0, 5, -7, 2, 1}, {2, 3}, dtype);
    const Array b = Array::from_vector<double>({2, 0, -7}, {3}, dtype);
    for (const auto& entry : cases) {
      const auto& name = std::get<0>(entry);
      const auto& c = std::get<1>(entry);
      INFO(name, " on ", dtype);
      const Array y = c.first(a, b.broadcast_to({2, 3}).transpose().transpose());
      const bool comparison = name.find("equal") != std::string::npos || name.find("less") != std::string::npos ||
                              name.find("greater") != std::string::npos;
      CHECK(y.dtype() == (comparison ? Dtype::bool_ : dtype));
      expect_values(y, reference_binary(a, b, c.second));
    }
    // Powers and quotients with exact answers.
    const Array base = Array::from_vector<double>({2, -3, 4, 1}, {4}, dtype);
    const Array exponent = Array::from_vector<double>({3, 2, 0, 5}, {4}, dtype);
    expect_values(ops::power(base, exponent), {8, 9, 1, 1});
    expect_values(ops::div(Array::from_vector<double>({8, 9, -6, 1}, {4}, dtype),
                           Array::from_vector<double>({2, 3, 3, 4}, {4}, dtype)),
                  {4, 3, -2, dtype == Dtype::int32 ? 0 : 0.25});
  }
  // Integer division truncates toward zero and gives 0 for a zero divisor instead of trapping.
  expect_values(ops::div(Array::from_vector<int32_t>({-7, 7, 5}, {3}), Array::from_vector<int32_t>({2, -2, 0}, {3})),
                {-3, -3, 0});
  const Array f = Array::from_vector<double>({1, -1, 0}, {3}, Dtype::float32);
  expect_values_nan(ops::div(f, Array::zeros({3})), {INFINITY, -INFINITY, NAN});
}

TEST_CASE("maximum and minimum propagate NaN from either side, comparisons with NaN are false") {
  const Array a = Array::from_vector<double>({NAN, 1, NAN}, {3});
  const Array b = Array::from_vector<double>({2, NAN, NAN}, {3});
  expect_values_nan(ops::maximum(a, b), {NAN, NAN, NAN});
  expect_values_nan(ops::minimum(b, a), {NAN, NAN, NAN});
  CHECK(ops::equal(a, a).to_vector<bool>() == std::vector<bool>{false, true, false});
  CHECK(ops::not_equal(a, b).to_vector<bool>() == std::vector<bool>{true, true, true});
  CHECK(ops::greater_equal(a, b).to_vector<bool>() == std::vector<bool>{false, false, false});
}

TEST_CASE("binary operations on bool compare but do not do arithmetic") {
  const Array p = Array::from_vector<bool>({true, false, true}, {3});
  const Array q = Array::from_vector<bool>({true, true, false}, {3});
  CHECK(ops::equal(p, q).to_vector<bool>() == std::vector<bool>{true, false, false});
  CHECK(ops::greater(p, q).to_vector<bool>() == std::vector<bool>{false, false, true});
  CHECK(ops::maximum(p, q).to_vector<bool>() == std::vector<bool>{true, true, true});
  CHECK(ops::minimum(p, q).dtype() == Dtype::bool_);
  expect_error<DtypeError>([&] { ops::add(p, q); }, {"add", "numeric", "bool"});
  expect_error<DtypeError>([&] { ops::power(p, q); }, {"power", "numeric", "bool"});
}

TEST_CASE("binary operations name the operation and both operands in their errors") {
  const Array a = Array::zeros({2, 3}), b = Array::zeros({4}), c = Array::zeros({3}, Dtype::float64);
  expect_error<ShapeError>([&] { ops::add(a, b); }, {"add", "(2, 3)", "(4,)"});
  expect_error<ShapeError>([&] { ops::greater(a, b); }, {"greater", "(2, 3)", "(4,)"});
  expect_error<DtypeError>([&] { ops::mul(a, c); }, {"mul", "float32", "float64"});
  expect_error<DtypeError>([&] { ops::add_to(a, c); }, {"add_to", "float32", "float64"});
  expect_error<ShapeError>([&] { ops::add_to(b, a); }, {"(2, 3)", "(4,)"});
  expect_error<ValueError>([&] { ops::sub(a, Array()); }, {"sub", "undefined"});
}

TEST_CASE("channel_sums and channel_affine work per channel of (N, C, ...) arrays in every floating dtype") {
  // x[n, c, i] = 10 n + c + i / 4 over shape (2, 3, 5) (transposed views are made contiguous first).
  std::vector<double> values;
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int i = 0; i < 5; ++i) values.push_back(10 * n + c + i / 4.0);
    }
  }
  const Array a = Array::from_vector<double>({1, -2, 0.5}, {3});
  const Array b = Array::from_vector<double>({0, 1, 4}, {3});
  const Array d = Array::from_vector<double>({3, 0, -1}, {3});
  for (Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    const Array x = Array::from_vector(values, {2, 3, 5}, dtype);
    const Array y = ops::mul(x, ops::scalar_like(2, x));
    const auto [sums, products] = ops::channel_sums(x, y);
    CHECK(sums.dtype() == Dtype::float64);
    std::vector<double> expected_sums(3, 0), expected_products(3, 0), affine(values.size());
    for (size_t k = 0; k < values.size(); ++k) {
      const size_t c = (k / 5) % 3;
      expected_sums[c] += values[k];
      expected_products[c] += 2 * values[k] * values[k];
      affine[k] = a.to_vector<double>()[c] * values[k] + b.to_vector<double>()[c] * 2 * values[k] +
                  d.to_vector<double>()[c];
    }
    // Half an output's last place at magnitude ~110: float16 keeps 11 bits, bfloat16 8.
    const double tolerance = dtype == Dtype::float16 ? 0.05 : dtype == Dtype::bfloat16 ? 0.3 : 1e-6;
    expect_values(sums, expected_sums, tolerance);
    expect_values(products, expected_products, tolerance);
    const Array out = ops::channel_affine(x, a, y, b, d);
    CHECK(out.dtype() == dtype);
    expect_values(out, affine, tolerance);
    expect_values(ops::channel_affine(x, a, Array(), Array(), d).get_item({1, 2}),
                  {0.5 * 12 - 1, 0.5 * 12.25 - 1, 0.5 * 12.5 - 1, 0.5 * 12.75 - 1, 0.5 * 13 - 1}, tolerance);
  }
  // Many planes and long planes exercise the threaded and the lane-summed paths.
  const Array big = Array::ones({64, 2, 1000});
  expect_values(ops::channel_sums(big, big).first, {64000, 64000});
  const Array big_out = ops::channel_affine(big.transpose({0, 1, 2}), Array::full({2}, 2), Array(), Array(),
                                            Array::full({2}, 1));
  CHECK(ops::amin(big_out).item<float>() == 3);
  CHECK(ops::amax(big_out).item<float>() == 3);
  const Array x = Array::zeros({2, 3, 4});
  expect_error<ShapeError>([&] { ops::channel_sums(Array::zeros({3}), Array::zeros({3})); }, {"channel_sums", "(3,)"});
  expect_error<ShapeError>([&] { ops::channel_sums(x, Array::zeros({2, 3, 5})); }, {"(2, 3, 4)", "(2, 3, 5)"});
  expect_error<DtypeError>([&] { ops::channel_sums(Array::zeros({2, 3}, Dtype::int32), Array::zeros({2, 3}, Dtype::int32)); },
                           {"channel_sums", "floating", "int32"});
  expect_error<ShapeError>([&] { ops::channel_affine(x, Array::zeros({4}), Array(), Array(), Array::zeros({3})); },
                           {"channel_affine", "(3,)", "(4,)"});
}

TEST_CASE("momentum_step updates velocity and weights in one pass in every floating dtype") {
  for (Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    const Array w = Array::from_vector<double>({1, 2, 3, 4}, {2, 2}, dtype);
    const Array v = Array::from_vector<double>({0.5, -1, 0, 2}, {2, 2}, dtype);
    ops::momentum_step(w, v, Array::from_vector<double>({2, -4}, {2}, dtype), 0.5, 0.25);
    expect_values(v, {-0.25, 0.5, -0.5, 2});  // 0.5 v - 0.25 g, g broadcast over rows
    expect_values(w, {0.75, 2.5, 2.5, 6});
  }
  const Array w = Array::zeros({3, 2}).transpose(), v = Array::ones({2, 3});
  ops::momentum_step(w, v, Array::ones({2, 3}), 0.9, 0.1);
  expect_values(w, {0.8, 0.8, 0.8, 0.8, 0.8, 0.8}, 1e-6);
  expect_error<ShapeError>([] { ops::momentum_step(Array::zeros({2}), Array::zeros({3}), Array::zeros({2}), 0.9, 0.1); },
                           {"momentum_step", "(2,)", "(3,)"});
  expect_error<DtypeError>(
      [] { ops::momentum_step(Array::zeros({2}), Array::zeros({2}), Array::zeros({2}, Dtype::float64), 0.9, 0.1); },
      {"momentum_step", "float32", "float64"});
}

TEST_CASE("axpby scales in place and adds a scaled, broadcast operand in every floating dtype") {
  for (Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    const Array dst = Array::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}, dtype);
    ops::axpby(dst, 0.5, Array::from_vector<double>({2, 4, 8}, {3}, dtype), -0.25);
    expect_values(dst, {0, 0, -0.5, 1.5, 1.5, 1});
  }
  const Array view = Array::zeros({4, 2}).transpose();
  ops::axpby(view, 2, Array::ones({2, 4}), 3);
  expect_values(view, {3, 3, 3, 3, 3, 3, 3, 3});
  expect_error<DtypeError>([] { ops::axpby(Array::zeros({2}), 1, Array::zeros({2}, Dtype::float64), 1); },
                           {"axpby", "float32", "float64"});
  expect_error<DtypeError>([] { ops::axpby(Array::zeros({2}, Dtype::int32), 1, Array::zeros({2}, Dtype::int32), 1); },
                           {"axpby", "floating", "int32"});
}

TEST_CASE("where selects with a broadcast bool condition") {
  const Array cond = Array::from_vector<bool>({true, false, true}, {3});
  const Array a = Array::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}, Dtype::int64);
  const Array b = Array::from_vector<double>({-1, -2}, {2, 1}, Dtype::int64);
  const Array y = ops::where(cond, a, b);
  CHECK(y.dtype() == Dtype::int64);
  expect_values(y, {1, -1, 3, 4, -2, 6});
  expect_values(ops::where(cond.expand_dims(0).transpose(), a.get_item({0}), Array::scalar(0, Dtype::int64)),
                {1, 2, 3, 0, 0, 0, 1, 2, 3});
  expect_values(ops::where(ops::greater(a, Array::scalar(3, Dtype::int64)), a, ops::neg(a)), {-1, -2, -3, 4, 5, 6});
  expect_error<DtypeError>([&] { ops::where(a, a, a); }, {"where", "bool", "int64"});
  expect_error<DtypeError>([&] { ops::where(cond, a, Array::zeros({3})); }, {"where", "int64", "float32"});
  expect_error<ShapeError>([&] { ops::where(Array::zeros({4}, Dtype::bool_), a, a); }, {"where", "(4,)", "(2, 3)"});
}

TEST_CASE("sum, amax, amin over every set of axes, with keepdims, on contiguous and transposed arrays") {
  for (Dtype dtype : {Dtype::float32, Dtype::int32, Dtype::float64}) {
    const Array base = distinct_2x3x4(dtype);
    // The contiguous array reduces its last axis with the inner loop, the transposed ones with the outer loop.
    for (const Array& x : {base, base.transpose(), base.transpose({1, 2, 0}), base.get_item({Slice{none, none, -1}})}) {
      for (const std::vector<int64_t>& axes : axis_subsets(3)) {
        const std::vector<int64_t> sorted = normalized(axes, 3);
        INFO("dtype ", dtype, ", shape ", x.shape(), ", strides ", Shape(x.strides().begin(), x.strides().end()), ", axes ", Shape(axes));
        const Array s = ops::sum(x, axes);
        CHECK(s.shape() == ops::reduced_shape(x.shape(), sorted, false));
        CHECK(s.dtype() == (dtype == Dtype::int32 ? Dtype::int64 : dtype));
        expect_values(s, reference_reduce(x, sorted, ReduceOp::sum));
        expect_values(ops::amax(x, axes), reference_reduce(x, sorted, ReduceOp::max));
        expect_values(ops::amin(x, axes), reference_reduce(x, sorted, ReduceOp::min));
        const Array kept = ops::amax(x, axes, true);
        CHECK(kept.shape() == ops::reduced_shape(x.shape(), sorted, true));
        CHECK(kept.ndim() == 3);
      }
    }
  }
}

TEST_CASE("reductions over all axes and the default axes") {
  const Array x = distinct_2x3x4(Dtype::float32);
  CHECK(ops::sum(x).ndim() == 0);
  CHECK(ops::sum(x).item<double>() == reference_reduce(x, {0, 1, 2}, ReduceOp::sum)[0]);
  CHECK(ops::amax(x).item<double>() == 12);
  CHECK(ops::amin(x).item<double>() == -11);
  CHECK(ops::sum(x, {}, true).shape() == Shape{1, 1, 1});
  CHECK(ops::sum(Array::scalar(4)).item<double>() == 4);
  CHECK(ops::amax(Array::scalar(-4), {}, true).shape() == Shape{});
  expect_values(ops::mean(x, {0, 2}), {
      reference_reduce(x, {0, 2}, ReduceOp::sum)[0] / 8, reference_reduce(x, {0, 2}, ReduceOp::sum)[1] / 8,
      reference_reduce(x, {0, 2}, ReduceOp::sum)[2] / 8});
  CHECK(ops::mean(x, {1}, true).shape() == Shape{2, 1, 4});
  expect_error<DtypeError>([] { ops::mean(Array::zeros({2}, Dtype::int32)); }, {"mean", "floating", "int32"});
}

TEST_CASE("argmax and argmin along one axis, negative axes, keepdims and the flattened array") {
  const Array base = distinct_2x3x4(Dtype::float32);
  for (const Array& x : {base, base.transpose(), base.transpose({2, 0, 1}).get_item({Slice{none, none, -1}})}) {
    for (int64_t axis = -3; axis < 3; ++axis) {
      INFO("shape ", x.shape(), ", axis ", axis);
      const std::vector<int64_t> sorted = normalized({axis}, 3);
      const Array i = ops::argmax(x, axis);
      CHECK(i.dtype() == Dtype::int64);
      expect_values(i, reference_reduce(x, sorted, ReduceOp::argmax));
      expect_values(ops::argmin(x, axis), reference_reduce(x, sorted, ReduceOp::argmin));
      CHECK(ops::argmax(x, axis, true).shape() == ops::reduced_shape(x.shape(), sorted, true));
    }
    const std::vector<double> flat = values(x);
    const auto top = std::max_element(flat.begin(), flat.end()) - flat.begin();
    CHECK(ops::argmax(x).item<int64_t>() == top);
    CHECK(ops::argmin(x).item<int64_t>() == std::min_element(flat.begin(), flat.end()) - flat.begin());
    CHECK(ops::argmax(x, none, true).shape() == Shape{1, 1, 1});
  }
  // Ties go to the first index, NaN wins (first NaN), as in NumPy.
  expect_values(ops::argmax(Array::from_vector<double>({1, 3, 3, 0}, {4}), 0), {1});
  expect_values(ops::argmin(Array::from_vector<double>({1, 0, 3, 0}, {4}), 0), {1});
  expect_values(ops::argmax(Array::from_vector<double>({1, NAN, 3, NAN}, {4}), 0), {1});
  expect_values(ops::argmin(Array::from_vector<double>({1, 2, NAN}, {3}), 0), {2});
}

TEST_CASE("max and min handle infinities and NaN") {
  const Array neg_inf = Array::full({2, 3}, -INFINITY, Dtype::float64);
  expect_values_nan(ops::amax(neg_inf, {1}), {-INFINITY, -INFINITY});
  expect_values_nan(ops::amin(Array::full({3}, INFINITY, Dtype::float64)), {INFINITY});
  expect_values_nan(ops::amax(Array::full({3}, -INFINITY, Dtype::float32)), {-INFINITY});
  const Array with_nan = Array::from_vector<double>({1, NAN, 3, 4, 5, 6}, {2, 3});
  expect_values_nan(ops::amax(with_nan, {1}), {NAN, 6});
  expect_values_nan(ops::amin(with_nan, {0}), {1, NAN, 3});
  expect_values_nan(ops::sum(with_nan, {1}), {NAN, 15});
  expect_values(ops::amax(Array::from_vector<int64_t>({INT64_MIN, INT64_MIN}, {2})), {static_cast<double>(INT64_MIN)});
}

TEST_CASE("integer and bool sums widen to int64 and do not wrap") {
  const Array bytes = Array::full({300}, 255, Dtype::uint8);
  const Array s = ops::sum(bytes);
  CHECK(s.dtype() == Dtype::int64);
  CHECK(s.item<int64_t>() == 76500);
  expect_values(ops::sum(Array::full({2, 200}, 200, Dtype::uint8), {1}), {40000, 40000});
  CHECK(ops::amax(bytes).dtype() == Dtype::uint8);
  const Array flags = Array::from_vector<bool>({true, false, true, true}, {2, 2});
  CHECK(ops::sum(flags).dtype() == Dtype::int64);
  expect_values(ops::sum(flags, {0}), {2, 1});
  CHECK(ops::amax(flags).item<int64_t>() == 1);
  CHECK(ops::argmax(flags, 1).to_vector<int64_t>() == std::vector<int64_t>{0, 0});
  const Array big = Array::full({3}, 2e9, Dtype::int32);
  CHECK(ops::sum(big).item<int64_t>() == 6000000000);
}

TEST_CASE("half-precision sums accumulate in double") {
  // A float16 running sum would stop at 2048, where adding 1 no longer changes it.
  CHECK(ops::sum(Array::ones({4096}, Dtype::float16)).item<double>() == 4096);
  CHECK(ops::sum(Array::ones({3, 1000}, Dtype::bfloat16), {1}).to_vector<double>() == std::vector<double>(3, 1000));
}

TEST_CASE("empty reductions: sums are zero, max/min/argmax need elements") {
  const Array e = Array::zeros({2, 0});
  expect_values(ops::sum(e, {1}), {0, 0});
  CHECK(ops::sum(e).item<double>() == 0);
  CHECK(ops::sum(e, {0}).shape() == Shape{0});
  CHECK(ops::amax(e, {0}).shape() == Shape{0});  // nothing is reduced over an empty axis here
  CHECK(ops::argmax(e, 0).shape() == Shape{0});
  expect_values_nan(ops::mean(Array::zeros({0}), {}), {NAN});
  expect_error<ShapeError>([&] { ops::amax(e, {1}); }, {"amax", "zero-size", "axis 1", "(2, 0)"});
  expect_error<ShapeError>([&] { ops::amin(e); }, {"amin", "zero-size", "(2, 0)"});
  expect_error<ShapeError>([&] { ops::argmax(e, 1); }, {"argmax", "zero-size", "(2, 0)"});
  expect_error<ShapeError>([&] { ops::argmin(e); }, {"argmin", "empty"});
}

TEST_CASE("reductions reject bad and repeated axes") {
  const Array x = Array::zeros({2, 3, 4});
  expect_error<IndexError>([&] { ops::sum(x, {3}); }, {"sum", "[-3, 3)", "got 3"});
  expect_error<IndexError>([&] { ops::amax(x, {-4}); }, {"amax", "got -4"});
  expect_error<IndexError>([&] { ops::sum(x, {1, -2}); }, {"sum", "distinct"});
  expect_error<IndexError>([&] { ops::argmax(x, 5); }, {"argmax", "got 5"});
  expect_error<ValueError>([] { ops::sum(Array()); }, {"sum", "undefined"});
}

TEST_CASE("matmul of 2-D arrays, transposed views and transpose flags") {
  const Array a = Array::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}, Dtype::float32);
  const Array b = Array::from_vector<double>({7, 8, 9, 10, 11, 12}, {3, 2}, Dtype::float32);
  expect_values(ops::matmul(a, b), {58, 64, 139, 154});
  expect_values(ops::matmul(b.transpose(), a.transpose()), {58, 139, 64, 154});
  expect_values(ops::matmul(a, a, false, true), {14, 32, 32, 77});
  expect_values(ops::matmul(a, a, true, false), {17, 22, 27, 22, 29, 36, 27, 36, 45});
  expect_values(ops::matmul(b, a, true, true), reference_matmul(b.transpose(), a.transpose()));
  // Layouts BLAS cannot read directly: steps in both axes, reversed rows, a broadcast row.
  const Array big = random({6, 8}, 3, Dtype::float32);
  const Array stepped = big.get_item({Slice{none, none, 2}, Slice{none, none, 2}});  // (3, 4)
  const Array reversed = big.get_item({Slice{none, none, -1}, Slice{0, 3}});          // (6, 3)
  expect_values(ops::matmul(reversed, stepped), reference_matmul(reversed, stepped), 1e-5);
  expect_values(ops::matmul(stepped.transpose(), stepped), reference_matmul(stepped.transpose(), stepped), 1e-5);
  const Array row = random({4}, 4, Dtype::float32).broadcast_to({3, 4});
  expect_values(ops::matmul(row, stepped.transpose()), reference_matmul(row, stepped.transpose()), 1e-5);
  expect_values(ops::matmul(a.get_item({Slice{}, Slice{0, 1}}), a.get_item({Slice{0, 1}})),
                reference_matmul(a.get_item({Slice{}, Slice{0, 1}}), a.get_item({Slice{0, 1}})));
}

TEST_CASE("the gemm kernel keeps alpha, beta and strided operands exact in the plain loop, OpenBLAS and oneDNN") {
  auto gemm = kernel_for<kernel_ops::Gemm>(Device::cpu());
  const DeviceScope on_cpu(Device::cpu());  // the CPU's kernel reads host memory, whatever the suite's device
  // (m, n, k): the plain loop's shapes (whole column blocks and leftovers), OpenBLAS's, and float32
  // products of 32768 multiply-adds or more, which go to oneDNN.
  const std::vector<std::array<int64_t, 3>> shapes{{1, 16, 16}, {1, 4, 16}, {16, 16, 1}, {16, 1, 16}, {8, 20, 12},
                                                   {3, 5, 0},   {40, 24, 16}, {40, 36, 48}, {1, 70, 500}};
  for (Dtype dtype : {Dtype::float32, Dtype::float64}) {
    for (const auto& entry : shapes) {
      const auto& m = std::get<0>(entry);
      const auto& n = std::get<1>(entry);
      const auto& k = std::get<2>(entry);
      for (int transposes = 0; transposes < 4; ++transposes) {
        const bool ta = transposes & 1, tb = transposes & 2;
        INFO(dtype, " m ", m, " n ", n, " k ", k, " transposes ", transposes);
        // Operands stored transposed when their flag is set, read through every-other-column views.
        const Array a_store = random(ta ? Shape{k, 2 * m} : Shape{m, 2 * k}, 11, dtype);
        const Array b_store = random(tb ? Shape{n, 2 * k} : Shape{k, 2 * n}, 12, dtype);
        const Array a = a_store.get_item({Slice{}, Slice{none, none, 2}});
        const Array b = b_store.get_item({Slice{}, Slice{none, none, 2}});
        const std::vector<double> product = reference_matmul(ta ? a.transpose() : a, tb ? b.transpose() : b);
        const double tol = dtype == Dtype::float32 ? 1e-4 : 1e-12;
        // beta = 0 overwrites (NaN in out does not survive); a transposed out is written through its strides.
        const Array out = Array::full({n, m}, NAN, dtype).transpose();
        gemm(a, ta, b, tb, 2.0, 0.0, out);
        std::vector<double> expected;
        for (double v : product) expected.push_back(2 * v);
        expect_values(out, expected, tol);
        const Array start = random({m, n}, 13, dtype);
        const Array accumulated = start.copy();
        gemm(a, ta, b, tb, -0.5, 3.0, accumulated);
        const std::vector<double> before = values(start);
        for (size_t i = 0; i < expected.size(); ++i) expected[i] = -0.5 * product[i] + 3 * before[i];
        expect_values(accumulated, expected, tol);
      }
    }
  }
  // alpha = 0 reads neither operand: NaN there does not reach out.
  const Array nan_a = Array::full({2, 3}, NAN), nan_b = Array::full({3, 16}, NAN);
  const Array out = Array::ones({2, 16});
  gemm(nan_a, false, nan_b, false, 0.0, 2.0, out);
  expect_values(out, std::vector<double>(32, 2));
}

TEST_CASE("linear writes the bias and accumulates the product onto it") {
  for (const Dtype dtype : {Dtype::float32, Dtype::float64}) {
    for (const int64_t n : {1, 3, 64}) {  // both sides of the gemm kernel's plain-loop limit
      const Array x = random({n, 16}, 1, dtype), w = random({12, 16}, 2, dtype), b = random({12}, 3, dtype);
      expect_close(ops::linear(x, w, b), ops::add(ops::matmul(x, w, false, true), b), 1e-5, 1e-5);
      expect_close(ops::linear(x, w, Array()), ops::matmul(x, w, false, true));
      const Array stepped = random({n, 32}, 4, dtype).get_item({Slice{}, Slice{none, none, 2}});  // (n, 16), stride 2
      expect_close(ops::linear(stepped, w, b), ops::add(ops::matmul(stepped, w, false, true), b), 1e-5, 1e-5);
    }
  }
  const Array x = random({2, 3}, 1), w = random({4, 3}, 2);
  expect_error<ShapeError>([&] { ops::linear(x, w, random({5}, 3)); }, {"(5,)", "(4, 3)"});
  expect_error<DtypeError>([&] { ops::linear(x, w, random({4}, 3, Dtype::float32)); }, {"float64", "float32"});
}

TEST_CASE("matmul broadcasts batch axes") {
  const Array a = random({2, 1, 2, 3}, 5);
  const Array b = random({3, 3, 4}, 6);
  const Array y = ops::matmul(a, b);
  CHECK(y.shape() == Shape{2, 3, 2, 4});
  expect_values(y, reference_matmul(a, b), 1e-12);
  const Array shared = random({3, 4}, 7);
  expect_values(ops::matmul(a, shared), reference_matmul(a, shared), 1e-12);
  expect_values(ops::matmul(b.transpose({0, 2, 1}), b, false, false), reference_matmul(b.transpose({0, 2, 1}), b), 1e-12);
  const Array bt = b.transpose({0, 2, 1}).copy();  // (3, 4, 3)
  expect_values(ops::matmul(a, bt, false, true), reference_matmul(a, b), 1e-12);
}

TEST_CASE("matmul in float16, bfloat16 and float64, and of empty extents") {
  const Array a = random({3, 5}, 8), b = random({5, 2}, 9);
  const std::vector<double> expected = reference_matmul(a, b);
  for (Dtype dtype : {Dtype::float16, Dtype::bfloat16, Dtype::float64}) {
    INFO("dtype ", dtype);
    const Array ah = a.astype(dtype), bh = b.astype(dtype);
    const Array y = ops::matmul(ah.transpose(), bh, true, false);
    CHECK(y.dtype() == dtype);
    expect_values(y, reference_matmul(ah, bh), dtype == Dtype::float64 ? 1e-12 : 3e-2);
    expect_values(y, expected, dtype == Dtype::float64 ? 1e-12 : 6e-2);
  }
  expect_values(ops::matmul(Array::zeros({2, 0}), Array::zeros({0, 3})), std::vector<double>(6, 0));
  CHECK(ops::matmul(Array::zeros({0, 2}), Array::zeros({2, 3})).shape() == Shape{0, 3});
  CHECK(ops::matmul(Array::zeros({0, 2, 2}), Array::zeros({2, 3})).shape() == Shape{0, 2, 3});
}

TEST_CASE("matmul errors name the shapes and dtypes") {
  const Array a = Array::zeros({2, 3});
  expect_error<ShapeError>([&] { ops::matmul(a, Array::zeros({2, 3})); }, {"matmul", "3 vs 2", "(2, 3)"});
  expect_error<ShapeError>([&] { ops::matmul(a, a, true, true); }, {"matmul", "a transposed", "b transposed"});
  expect_error<ShapeError>([&] { ops::matmul(a, Array::zeros({3})); }, {"matmul", "at least 2 axes", "(3,)"});
  expect_error<ShapeError>([&] { ops::matmul(Array::zeros({2, 2, 3}), Array::zeros({3, 3, 1})); },
                           {"matmul", "(2,)", "(3,)"});
  expect_error<DtypeError>([&] { ops::matmul(a, Array::zeros({3, 2}, Dtype::float64)); }, {"matmul", "float32", "float64"});
  expect_error<DtypeError>([] { ops::matmul(Array::zeros({2, 2}, Dtype::int32), Array::zeros({2, 2}, Dtype::int32)); },
                           {"matmul", "floating", "int32"});
}

TEST_CASE("concatenate joins along any axis, views included") {
  const Array a = Array::from_vector<double>({1, 2, 3, 4}, {2, 2});
  const Array b = Array::from_vector<double>({5, 6}, {1, 2});
  expect_values(ops::concatenate({a, b}, 0), {1, 2, 3, 4, 5, 6});
  expect_values(ops::concatenate({a, b.transpose(), a.transpose()}, -1), {1, 2, 5, 1, 3, 3, 4, 6, 2, 4});
  expect_values(ops::concatenate({a.get_item({Slice{none, none, -1}}), Array::zeros({0, 2}, Dtype::float64)}, 0),
                {3, 4, 1, 2});
  CHECK(ops::concatenate({a}, 1).shape() == Shape{2, 2});
  expect_error<ShapeError>([&] { ops::concatenate({a, b}, 1); }, {"concatenate", "(2, 2)", "axis 1", "(1, 2)"});
  expect_error<DtypeError>([&] { ops::concatenate({a, b.astype(Dtype::float32)}, 0); },
                           {"concatenate", "float64", "float32"});
  expect_error<ShapeError>([&] { ops::concatenate({a, Array::zeros({4}, Dtype::float64)}, 0); }, {"concatenate", "(4,)"});
  expect_error<IndexError>([&] { ops::concatenate({a, b}, 2); }, {"concatenate", "got 2"});
  expect_error<ValueError>([] { ops::concatenate({}, 0); }, {"concatenate", "at least one"});
}

TEST_CASE("large arrays take the parallel paths and give identical results on 1 and 2 threads") {
  const int original = get_num_threads();
  const Array x = Array::uniform({1024, 1024}, -1, 1, 11);
  const Array row = Array::uniform({1024}, -1, 1, 12);
  auto run = [&] {
    return std::vector<std::vector<double>>{
        values(ops::add(x, row)),
        values(ops::exp(x.transpose())),
        values(ops::mul(x.get_item({Slice{none, none, 2}}), x.get_item({Slice{1, none, 2}}))),
        values(x.astype(Dtype::float16)),
        values(x.transpose().copy()),
        values(ops::sum(x, {0})),
        values(ops::sum(x, {1})),
        values(ops::sum(x)),
        values(ops::amax(x.transpose(), {0})),
        values(ops::amin(x, {0})),
        values(ops::argmax(x, 1)),
        values(ops::where(ops::greater(x, row), x, row)),
        values(Array::normal({1 << 20}, 0, 1, 13)),
    };
  };
  set_num_threads(1);
  const auto one = run();
  set_num_threads(2);
  const auto two = run();
  set_num_threads(original);
  REQUIRE(one.size() == two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    INFO("result ", i);
    CHECK(one[i] == two[i]);
  }
  // And the parallel results are right.
  const std::vector<double> v = values(x), sums0 = two[5], sums1 = two[6];
  for (size_t j = 0; j < 1024; j += 97) {
    double column = 0, line = 0;
    for (size_t i = 0; i < 1024; ++i) {
      column += v[i * 1024 + j];
      line += v[j * 1024 + i];
    }
    CHECK(sums0[j] == doctest::Approx(column).epsilon(1e-5));
    CHECK(sums1[j] == doctest::Approx(line).epsilon(1e-5));
  }
  expect_values(ops::add(x, row).get_item({Slice{1000, 1002}}), reference_binary(x.get_item({Slice{1000, 1002}}), row, std::plus<>()), 1e-6);
}

TEST_CASE("set_flush_denormal makes subnormal results zero on the caller and every pool thread, and undoes it") {
  const int original = get_num_threads();
  set_num_threads(2);
  const Array normal = Array::full({1 << 17}, 2e-38), quarter = Array::full({1 << 17}, 0.25);  // 5e-39 is subnormal
  if (!set_flush_denormal(true)) {
    skip_case("this CPU has no flush-to-zero mode");
    set_num_threads(original);
    return;
  }
  volatile float small = 2e-38f;
  CHECK(small * 0.25f == 0.0f);
  CHECK(ops::amax(ops::mul(normal, quarter)).item<double>() == 0.0);  // the parallel path: both threads flush
  set_flush_denormal(false);
  CHECK(small * 0.25f > 0.0f);
  CHECK(ops::amin(ops::mul(normal, quarter)).item<double>() == doctest::Approx(5e-39).epsilon(1e-6));
  set_num_threads(original);
}

TEST_CASE("a second kernel for one operation and device type is refused, naming both backends") {
  // No dispatch first: registration itself installs the built-in kernels before refusing this one.
  auto* cpu_copy = +[](const Array&, const Array&) {};
  expect_error<ValueError>([&] { register_kernel<kernel_ops::Copy>(DeviceType::cpu, "early", cpu_copy); },
                           {"copy", "backend 'early'", "backend 'cpu' already registered"});
  CHECK((kernel_for<kernel_ops::Copy>(Device::cpu()) != cpu_copy));
  expect_values(Array::ones({2}).copy(), {1, 1});
  cpu_copy = kernel_for<kernel_ops::Copy>(Device::cpu());
  expect_error<ValueError>([&] { register_kernel<kernel_ops::Copy>(DeviceType::cpu, "another", cpu_copy); },
                           {"copy", "backend 'another'", "backend 'cpu' already registered", "cpu devices"});
  CHECK((kernel_for<kernel_ops::Copy>(Device::cpu()) == cpu_copy));
  // A build with CUDA has a CUDA kernel for every contract, and refuses a second one; a build without
  // has none, and says so.
  if (cuda::built_with_cuda()) {
    auto* conv = kernel_for<kernel_ops::Conv2d>(Device::cuda(0));
    expect_error<ValueError>([&] { register_kernel<kernel_ops::Conv2d>(DeviceType::cuda, "another", conv); },
                             {"conv2d", "backend 'another'", "backend 'cuda' already registered"});
  } else {
    expect_error<DeviceError>([] { kernel_for<kernel_ops::Conv2d>(Device::cuda(0)); },
                              {"conv2d: no kernel is registered for device cuda:0"});
  }
}
