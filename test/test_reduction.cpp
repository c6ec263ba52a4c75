#include "testing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

using namespace kusari;
using namespace kusari::testing;

namespace {

// A float64 constant with the given row-major values.
Variable values(const std::vector<double>& v, const Shape& shape) { return Variable(Array::from_vector(v, shape)); }

// Values of `shape` that are pairwise at least 0.1 apart (no ties, so max/min have one arg-extreme).
Array distinct(const Shape& shape, int64_t stride) {
  const int64_t n = shape.numel();
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(0.1 * static_cast<double>((k * stride) % n) - 0.05 * n);
  return Array::from_vector(v, shape);
}

// The reduction signature shared by sum, mean, max, min and logsumexp.
using Reduction = Variable (*)(const Variable&, const std::vector<int64_t>&, bool);

// A one-input adapter reducing over `axes`.
gradient_check::Function reduce(Reduction f, std::vector<int64_t> axes, bool keepdims) {
  return unary([f, axes, keepdims](const Variable& x) { return f(x, axes, keepdims); });
}

// Gradient, double-backward and dtype checks of f over several axis choices on a (2, 3, 4) input.
void check_reduction(Reduction f, const Array& x, double dtype_tolerance_scale = 1) {
  const std::vector<std::pair<std::vector<int64_t>, bool>> cases = {
      {{}, false}, {{1}, false}, {{-1}, true}, {{0, 2}, true}, {{2, 0}, false}};
  for (const auto& entry : cases) {
    const auto& axes = std::get<0>(entry);
    const auto& keepdims = std::get<1>(entry);
    INFO("axes of size ", axes.size(), ", keepdims ", keepdims);
    check_gradients(reduce(f, axes, keepdims), {x});
    check_forward_dtypes(reduce(f, axes, keepdims), {x}, dtype_tolerance_scale);
  }
}

}  // namespace

TEST_CASE("sum over all, some and negative axes") {
  const Variable x = values({1, 2, 3, 4, 5, 6}, {2, 3});
  const Variable all = F::sum(x);
  CHECK(all.shape() == Shape{});
  expect_values(all.data(), {21});
  const Variable rows = F::sum(x, {0});
  CHECK(rows.shape() == Shape{3});
  expect_values(rows.data(), {5, 7, 9});
  const Variable kept = F::sum(x, {-1}, true);
  CHECK(kept.shape() == Shape{2, 1});
  expect_values(kept.data(), {6, 15});
  CHECK(F::sum(x, {}, true).shape() == Shape{1, 1});
  expect_values(F::sum(x, {1, 0}).data(), {21});
}

TEST_CASE("sum of integers gives int64") {
  const Variable x(Array::from_vector<int32_t>({1, 2, 3, 4}, {2, 2}), false);
  const Variable y = F::sum(x, {0});
  CHECK(y.dtype() == Dtype::int64);
  CHECK(y.data().to_vector<int64_t>() == std::vector<int64_t>{4, 6});
}

TEST_CASE("sum gradients, double backward and dtypes") { check_reduction(F::sum, random({2, 3, 4}, 1), 2); }

TEST_CASE("sum backward spreads the gradient over the reduced axes") {
  const Variable x(random({2, 3}, 2));
  Variable y = F::sum(x, {1});
  y.set_grad(Array::from_vector<double>({10, 20}, {2}));
  y.backward();
  expect_values(x.grad(), {10, 10, 10, 20, 20, 20});
}

TEST_CASE("mean over axes") {
  const Variable x = values({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_values(F::mean(x).data(), {3.5});
  expect_values(F::mean(x, {0}).data(), {2.5, 3.5, 4.5});
  const Variable kept = F::mean(x, {-1}, true);
  CHECK(kept.shape() == Shape{2, 1});
  expect_values(kept.data(), {2, 5});
  CHECK(kept.dtype() == Dtype::float64);
}

TEST_CASE("mean gradients, double backward and dtypes") { check_reduction(F::mean, random({2, 3, 4}, 3)); }

TEST_CASE("max and min values") {
  const Variable x = values({3, -1, 7, 2, 8, -4}, {2, 3});
  expect_values(F::max(x).data(), {8});
  expect_values(F::max(x, {1}).data(), {7, 8});
  expect_values(F::min(x, {0}).data(), {2, -1, -4});
  const Variable kept = F::min(x, {-1}, true);
  CHECK(kept.shape() == Shape{2, 1});
  expect_values(kept.data(), {-1, -4});
}

TEST_CASE("max and min send the gradient to the arg-extreme element") {
  Variable x = values({3, -1, 7, 2, 8, -4}, {2, 3});
  Variable high = F::max(x, {1});
  high.set_grad(Array::from_vector<double>({10, 20}, {2}));
  high.backward();
  expect_values(x.grad(), {0, 0, 10, 0, 20, 0});
  x.cleargrad();
  F::min(x).backward();
  expect_values(x.grad(), {0, 0, 0, 0, 0, 1});
}

TEST_CASE("max gives the gradient to every tied maximum") {
  const Variable x = values({1, 3, 3}, {3});
  F::max(x).backward();
  expect_values(x.grad(), {0, 1, 1});
}

TEST_CASE("max and min gradients, double backward and dtypes") {
  check_reduction(F::max, distinct({2, 3, 4}, 7));
  check_reduction(F::min, distinct({2, 3, 4}, 5));
}

TEST_CASE("argmax returns int64 indices that need no gradient") {
  const Variable x = values({3, -1, 7, 2, 8, -4}, {2, 3});
  const Variable flat = F::argmax(x);
  CHECK(flat.dtype() == Dtype::int64);
  CHECK_FALSE(flat.requires_grad());
  CHECK(flat.shape() == Shape{});
  CHECK(flat.item<int64_t>() == 4);
  CHECK(F::argmax(x, 0).data().to_vector<int64_t>() == std::vector<int64_t>{0, 1, 0});
  const Variable kept = F::argmax(x, -1, true);
  CHECK(kept.shape() == Shape{2, 1});
  CHECK(kept.data().to_vector<int64_t>() == std::vector<int64_t>{2, 1});
  CHECK(F::argmax(x, {}, true).shape() == Shape{1, 1});
}

TEST_CASE("argmax agrees across dtypes") {
  check_forward_dtypes(unary([](const Variable& x) { return F::argmax(x, 1); }), {distinct({3, 4}, 5)});
}

TEST_CASE("logsumexp values") {
  const Variable x = values({0, std::log(2.0), std::log(5.0), 1, 1, 1}, {2, 3});
  expect_values(F::logsumexp(x, {1}).data(), {std::log(8.0), 1 + std::log(3.0)}, 1e-12);
  const Variable all = F::logsumexp(x);
  CHECK(all.shape() == Shape{});
  expect_values(all.data(), {std::log(8 + 3 * std::exp(1.0))}, 1e-12);
  CHECK(F::logsumexp(x, {0}, true).shape() == Shape{1, 3});
}

TEST_CASE("logsumexp is stable for large magnitudes and infinite rows") {
  const double inf = std::numeric_limits<double>::infinity();
  const Variable x = values({1000, 1000, -1000, -1000, -inf, -inf}, {3, 2});
  const std::vector<double> y = F::logsumexp(x, {1}).data().to_vector<double>();
  CHECK(y[0] == doctest::Approx(1000 + std::log(2.0)));
  CHECK(y[1] == doctest::Approx(-1000 + std::log(2.0)));
  CHECK(y[2] == -inf);
  const Variable half(Array::from_vector<double>({60000, 60000}, {2}, Dtype::float16));
  CHECK(F::logsumexp(half).item<double>() == doctest::Approx(60000).epsilon(1e-3));
}

TEST_CASE("logsumexp gradients, double backward and dtypes") {
  check_reduction(F::logsumexp, random({2, 3, 4}, 4), 4);
}

TEST_CASE("logsumexp backward is the softmax") {
  const Variable x = values({0, std::log(3.0)}, {2});
  F::logsumexp(x).backward();
  expect_values(x.grad(), {0.25, 0.75}, 1e-12);
}

TEST_CASE("reductions reject out-of-range and repeated axes, naming the operation") {
  const Variable x(Array::zeros({2, 3}, Dtype::float64));
  const std::vector<std::pair<const char*, Reduction>> reductions = {
      {"sum", F::sum}, {"mean", F::mean}, {"max", F::max}, {"min", F::min}, {"logsumexp", F::logsumexp}};
  for (const auto& entry : reductions) {
    const auto& name = std::get<0>(entry);
    const auto& f = std::get<1>(entry);
    INFO(name);
    expect_error<IndexError>([&] { f(x, {2}, false); }, {name, "[-2, 2)", "got 2"});
    expect_error<IndexError>([&] { f(x, {-3}, false); }, {name, "got -3"});
    expect_error<IndexError>([&] { f(x, {1, -1}, false); }, {name, "repeated"});
  }
  expect_error<IndexError>([&] { F::argmax(x, 2); }, {"argmax", "got 2"});
}

TEST_CASE("reductions reject bad dtypes and empty extremes") {
  const Variable ints(Array::zeros({2, 3}, Dtype::int32), false);
  expect_error<DtypeError>([&] { F::mean(ints); }, {"mean", "floating", "int32"});
  expect_error<DtypeError>([&] { F::logsumexp(ints); }, {"logsumexp", "floating", "int32"});
  const Variable empty(Array::zeros({0, 3}, Dtype::float64));
  expect_error<ShapeError>([&] { F::max(empty, {0}); }, {"max", "axis 0", "(0, 3)"});
  expect_error<ShapeError>([&] { F::min(empty); }, {"min", "(0, 3)"});
  expect_error<ShapeError>([&] { F::logsumexp(empty, {0}); }, {"logsumexp", "(0, 3)"});
  expect_error<ShapeError>([&] { F::argmax(empty); }, {"argmax", "empty"});
  expect_values(F::sum(empty, {0}).data(), {0, 0, 0});
}

namespace {

// Sums over `axes` of the row-major `values` of `shape`, each in row-major order over the reduced axes
// (the order the CPU kernel promises), in double.
std::vector<double> row_major_sums(const std::vector<double>& values, const Shape& shape,
                                   const std::vector<int64_t>& axes) {
  Shape kept_shape;
  for (int64_t axis = 0; axis < shape.ndim(); ++axis) {
    if (std::find(axes.begin(), axes.end(), axis) == axes.end()) kept_shape.push_back(shape[axis]);
  }
  std::vector<double> sums(static_cast<size_t>(kept_shape.numel()), 0.0);
  std::vector<int64_t> index(static_cast<size_t>(shape.ndim()), 0);
  for (double value : values) {
    int64_t kept = 0;
    for (int64_t axis = 0; axis < shape.ndim(); ++axis) {
      if (std::find(axes.begin(), axes.end(), axis) == axes.end()) kept = kept * shape[axis] + index[axis];
    }
    sums[static_cast<size_t>(kept)] += value;
    for (int64_t axis = shape.ndim() - 1; axis >= 0 && ++index[axis] == shape[axis]; --axis) index[axis] = 0;
  }
  return sums;
}

}  // namespace

TEST_CASE("sums over any layout add in row-major order over the reduced axes (on a GPU: the same bits every run)") {
  // Values whose sum depends on the order of addition, so a kernel that walks another order fails. A
  // GPU's reductions add in blocks and parts, in an order of their own but the same on every run.
  const bool in_row_major_order = default_device().type != DeviceType::cuda;
  auto order_sensitive = [](const Shape& shape) {
    std::vector<double> v;
    for (int64_t k = 0; k < shape.numel(); ++k) v.push_back(k % 7 == 0 ? (k % 2 ? 1e16 : -1e16) : 1.0 + 0.37 * k);
    return Array::from_vector(v, shape);
  };
  const Array x = order_sensitive({4, 6, 5});
  // Larger than one thread's share of a loop, so even its contiguous reductions take the general path.
  const Array large = order_sensitive({3, 128, 100});
  const std::vector<std::pair<const char*, Array>> views = {
      {"transposed", x.transpose({2, 0, 1})},
      {"every other row", x.get_item({Slice{0, 4, 2}})},
      {"with axes of extent 1", x.reshape({4, 1, 6, 5, 1}).transpose({4, 0, 1, 2, 3})},
      {"broadcast", x.get_item({int64_t{1}}).broadcast_to({3, 6, 5})},
      {"rows 1 and 2", x.get_item({Slice{1, 3}})},
      {"large and contiguous", large},
      {"large, inner axes swapped", large.transpose({0, 2, 1})}};
  for (const auto& named_view : views) {
    const Array& view = named_view.second;
    const std::vector<double> values = view.to_vector<double>();
    std::vector<std::vector<int64_t>> axis_sets = {{}, {0}};
    for (int64_t axis = 1; axis < view.ndim(); ++axis) {
      axis_sets.push_back({axis});
      axis_sets.push_back({axis - 1, axis});
    }
    for (std::vector<int64_t> axes : axis_sets) {
      if (axes.empty()) {
        for (int64_t axis = 0; axis < view.ndim(); ++axis) axes.push_back(axis);
      }
      INFO(std::string(named_view.first), ", axes from ", axes.front(), " to ", axes.back());
      const std::vector<double> sums = ops::sum(view, axes).to_vector<double>();
      CHECK(sums == (in_row_major_order ? row_major_sums(values, view.shape(), axes)
                                        : ops::sum(view, axes).to_vector<double>()));
    }
  }
}
