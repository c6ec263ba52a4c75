#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

TEST_CASE("reshape keeps the elements and infers one extent") {
  const Variable x(Array::arange(0, 6, 1, Dtype::float64).reshape({2, 3}));
  const Variable y = F::reshape(x, {3, -1});
  CHECK(y.shape() == Shape{3, 2});
  expect_values(y.data(), {0, 1, 2, 3, 4, 5});
}

TEST_CASE("reshape matches finite differences, twice") {
  check_gradients(unary([](const Variable& v) { return F::reshape(v, {4, 3}); }), {random({2, 6}, 1)});
  check_gradients(unary([](const Variable& v) { return F::reshape(v, {-1}); }), {random({2, 3, 2}, 2)});
  check_forward_dtypes(unary([](const Variable& v) { return F::reshape(v, {3, 2}); }), {random({6}, 3)});
}

TEST_CASE("reshape to a different size names both shapes") {
  const Variable x(Array::zeros({2, 3}));
  expect_error<ShapeError>([&] { F::reshape(x, {4, 2}); }, {"reshape", "(2, 3)", "(4, 2)"});
}
