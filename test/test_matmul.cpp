#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

gradient_check::Function matmul_with(bool transa, bool transb) {
  return binary([=](const Variable& a, const Variable& b) { return F::matmul(a, b, transa, transb); });
}

}  // namespace

TEST_CASE("matmul of 2-D operands computes the matrix product") {
  const Variable a(Array::arange(0, 6, 1, Dtype::float64).reshape({2, 3}));
  const Variable b(Array::arange(0, 12, 1, Dtype::float64).reshape({3, 4}));
  expect_values(F::matmul(a, b).data(), {20, 23, 26, 29, 56, 68, 80, 92});
  // a^T has shape (3, 2): a^T @ a is (3, 3); a @ a^T is (2, 2).
  expect_values(F::matmul(a, a, true, false).data(), {9, 12, 15, 12, 17, 22, 15, 22, 29});
  expect_values(F::matmul(a, a, false, true).data(), {5, 14, 14, 50});
}

TEST_CASE("matmul matches finite differences, twice, for every transposition") {
  for (bool transa : {false, true}) {
    for (bool transb : {false, true}) {
      INFO("transa ", transa, ", transb ", transb);
      const Array a = random(transa ? Shape{3, 2} : Shape{2, 3}, 1);
      const Array b = random(transb ? Shape{4, 3} : Shape{3, 4}, 2);
      check_gradients(matmul_with(transa, transb), {a, b});
      check_forward_dtypes(matmul_with(transa, transb), {a, b}, 4);
    }
  }
}

TEST_CASE("batched matmul broadcasts batch axes and sums their gradients back") {
  const Array a = random({2, 1, 2, 3}, 3), b = random({3, 3, 2}, 4);
  const Variable y = F::matmul(Variable(a), Variable(b));
  CHECK(y.shape() == Shape{2, 3, 2, 2});
  // Each batch element is the 2-D product of its slices.
  const Variable slice = F::matmul(Variable(a.get_item({int64_t{1}, int64_t{0}})), Variable(b.get_item({int64_t{2}})));
  expect_close(y.data().get_item({int64_t{1}, int64_t{2}}), slice.data(), 1e-12, 1e-12);
  check_gradients(matmul_with(false, false), {a, b});
  check_gradients(matmul_with(true, true), {random({3, 2}, 5), random({2, 4, 3}, 6)});
  check_forward_dtypes(matmul_with(false, false), {a, b}, 4);
}

TEST_CASE("matmul errors name both shapes") {
  const Variable a(Array::zeros({2, 3})), b(Array::zeros({4, 5})), c(Array::zeros({3}));
  expect_error<ShapeError>([&] { F::matmul(a, b); }, {"matmul", "inner", "(2, 3)", "(4, 5)"});
  expect_error<ShapeError>([&] { F::matmul(a, b, true, true); }, {"(2, 3)", "(4, 5)", "both transposed"});
  expect_error<ShapeError>([&] { F::matmul(a, c); }, {"matmul", "at least 2 axes", "(2, 3)", "(3,)"});
  const Variable d(Array::zeros({2, 2, 3})), e(Array::zeros({3, 3, 4}));
  expect_error<ShapeError>([&] { F::matmul(d, e); }, {"matmul", "batch", "(2, 2, 3)", "(3, 3, 4)"});
  expect_error<DtypeError>([&] { F::matmul(a, Variable(Array::zeros({3, 2}, Dtype::float64))); },
                           {"matmul", "float32", "float64"});
  expect_error<DtypeError>([&] { F::matmul(Variable(Array::zeros({2, 2}, Dtype::int32)),
                                           Variable(Array::zeros({2, 2}, Dtype::int32))); },
                           {"matmul", "floating", "int32"});
}

TEST_CASE("linear computes x W^T + b with W of shape (out, in)") {
  const Variable x(Array::arange(0, 6, 1, Dtype::float64).reshape({2, 3}));
  const Variable W(Array::from_vector<double>({1, 0, -1, 2, 1, 0}, {2, 3}));
  const Variable b(Array::from_vector<double>({0.5, -0.5}, {2}));
  expect_values(F::linear(x, W, b).data(), {-1.5, 0.5, -1.5, 9.5});
  expect_values(F::linear(x, W).data(), {-2, 1, -2, 10});
}

TEST_CASE("linear flattens inputs with more than two axes to (N, -1)") {
  const Array x = random({2, 3, 2}, 7), W = random({4, 6}, 8), b = random({4}, 9);
  const Variable y = F::linear(Variable(x), Variable(W), Variable(b));
  CHECK(y.shape() == Shape{2, 4});
  expect_close(y.data(), F::linear(Variable(x.reshape({2, 6})), Variable(W), Variable(b)).data(), 1e-12, 1e-12);
  const auto f = [](const std::vector<Variable>& v) { return std::vector<Variable>{F::linear(v[0], v[1], v[2])}; };
  check_gradients(f, {x, W, b});
  check_forward_dtypes(f, {x, W, b}, 4);
  check_gradients(binary([](const Variable& v, const Variable& w) { return F::linear(v, w); }),
                  {random({3, 2}, 10), random({5, 2}, 11)});
}

TEST_CASE("linear errors name the shapes") {
  const Variable x(Array::zeros({2, 3})), W(Array::zeros({4, 5}));
  expect_error<ShapeError>([&] { F::linear(x, W); }, {"linear", "5 features", "(4, 5)", "(2, 3)"});
  expect_error<ShapeError>([&] { F::linear(x, Variable(Array::zeros({3}))); }, {"linear", "W", "(3,)"});
  expect_error<ShapeError>([&] { F::linear(Variable(Array::zeros({3})), Variable(Array::zeros({2, 3}))); },
                           {"linear", "x", "(3,)"});
  expect_error<ShapeError>([&] { F::linear(x, Variable(Array::zeros({4, 3})), Variable(Array::zeros({3}))); },
                           {"linear", "b", "(4,)", "(4, 3)", "(3,)"});
  expect_error<DtypeError>([&] { F::linear(x, Variable(Array::zeros({4, 3}, Dtype::float64))); },
                           {"linear", "float32", "float64"});
}
