#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

TEST_CASE("add, sub, mul and div broadcast and match finite differences") {
  const Array a = random({3, 4}, 1), b = random({4}, 2);
  const Array positive = random({3, 1}, 3, Dtype::float64, 0.5, 2.0);
  check_gradients(binary(F::add), {a, b});
  check_gradients(binary(F::sub), {a, b});
  check_gradients(binary(F::mul), {a, b});
  check_gradients(binary(F::div), {a, positive});
  check_forward_dtypes(binary(F::add), {a, b});
  check_forward_dtypes(binary(F::sub), {a, b});
  check_forward_dtypes(binary(F::mul), {a, b});
  check_forward_dtypes(binary(F::div), {a, positive}, 4);
}

TEST_CASE("add computes NumPy-broadcast values") {
  const Variable a(Array::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}));
  const Variable b(Array::from_vector<double>({10, 20, 30}, {3}));
  expect_values((a + b).data(), {11, 22, 33, 14, 25, 36});
  expect_values((a * b - a).data(), {9, 38, 87, 36, 95, 174});
  expect_values((1.0 / a).data(), {1, 0.5, 1.0 / 3, 0.25, 0.2, 1.0 / 6});
}

TEST_CASE("neg and pow") {
  const Array a = random({2, 3}, 4, Dtype::float64, 0.5, 2.0), b = random({2, 3}, 5);
  check_gradients(unary(F::neg), {b});
  check_gradients(binary([](const Variable& x, const Variable& y) { return F::pow(x, y); }), {a, b});
  check_gradients(unary([](const Variable& x) { return F::pow(x, 3.0); }), {b});
  check_gradients(unary([](const Variable& x) { return F::pow(x, -1.5); }), {a});
  check_forward_dtypes(binary([](const Variable& x, const Variable& y) { return F::pow(x, y); }), {a, b}, 4);
  check_forward_dtypes(unary([](const Variable& x) { return F::pow(x, 2.5); }), {a}, 4);
}

TEST_CASE("binary functions reject mismatched shapes and dtypes with both named") {
  const Variable a(Array::zeros({2, 3})), b(Array::zeros({4})), c(Array::zeros({3}, Dtype::float64));
  expect_error<ShapeError>([&] { F::add(a, b); }, {"add", "(2, 3)", "(4,)"});
  expect_error<DtypeError>([&] { F::mul(a, c); }, {"mul", "float32", "float64"});
}
