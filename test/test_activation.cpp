#include "testing.h"

#include <cmath>

using namespace kusari;
using namespace kusari::testing;

namespace {

// Values in ±[0.2, 1): gradient checks stay clear of the kink at 0.
Array away_from_zero(const Shape& shape, uint64_t seed) {
  return ops::mul(random(shape, seed, Dtype::float64, 0.2, 1.0), ops::sign(random(shape, seed + 1)));
}

Variable constant(const std::vector<double>& values, const Shape& shape) {
  return Variable(Array::from_vector(values, shape), false);
}

}  // namespace

TEST_CASE("relu, leaky_relu and elu compute their piecewise values") {
  const Variable x = constant({-2, -0.5, 0.5, 3}, {4});
  expect_values(F::relu(x).data(), {0, 0, 0.5, 3});
  expect_values(F::leaky_relu(x).data(), {-0.4, -0.1, 0.5, 3});
  expect_values(F::leaky_relu(x, 0.5).data(), {-1, -0.25, 0.5, 3});
  expect_values(F::elu(x).data(), {-0.8646647167633873, -0.3934693402873666, 0.5, 3}, 1e-12);
  expect_values(F::elu(x, 2).data(), {-1.7293294335267746, -0.7869386805747332, 0.5, 3}, 1e-12);
}

TEST_CASE("sigmoid and tanh compute their values") {
  const Variable x = constant({-2, -0.5, 0.5, 3}, {4});
  expect_values(F::sigmoid(x).data(), {0.11920292202211755, 0.3775406687981454, 0.6224593312018546,
                                       0.9525741268224334}, 1e-12);
  expect_values(F::tanh(x).data(), {-0.9640275800758169, -0.46211715726000974, 0.46211715726000974,
                                    0.9950547536867305}, 1e-12);
}

TEST_CASE("piecewise activations match finite differences away from the kink") {
  const Array x = away_from_zero({3, 4}, 1);
  check_gradients(unary(F::relu), {x});
  check_gradients(unary([](const Variable& v) { return F::leaky_relu(v); }), {x});
  check_gradients(unary([](const Variable& v) { return F::leaky_relu(v, -0.3); }), {x});
  check_gradients(unary([](const Variable& v) { return F::elu(v); }), {x});
  check_gradients(unary([](const Variable& v) { return F::elu(v, 0.7); }), {x});
}

TEST_CASE("relu passes the gradient only where the input is positive") {
  Variable x(Array::from_vector<double>({-1, 2, -3, 4}, {4}));
  Variable y = F::relu(x);
  y.set_grad(Array::from_vector<double>({10, 20, 30, 40}, {4}));
  y.backward();
  expect_values(x.grad(), {0, 20, 0, 40});
}

TEST_CASE("add_relu equals relu of the sum, forward and backward, and checks its operands") {
  Variable a(Array::from_vector<double>({-1, 2, -3, 4, 0.5, std::nan("")}, {2, 3}));
  Variable b(Array::from_vector<double>({0.5, -3, 1, 1, -1, 0}, {2, 3}));
  Variable y = F::add_relu(a, b);
  const std::vector<double> values = y.data().to_vector<double>();
  CHECK(std::isnan(values[5]));  // NaN propagates as through relu
  expect_values(y.data().get_item({Slice{0, 2}, Slice{0, 2}}), {0, 0, 5, 0});
  y.set_grad(Array::from_vector<double>({10, 20, 30, 40, 50, 60}, {2, 3}));
  y.backward();
  expect_values(a.grad().get_item({0}), {0, 0, 0});
  expect_values(b.grad().get_item({1, Slice{0, 2}}), {40, 0});
  const Array x1 = away_from_zero({3, 4}, 2), x2 = away_from_zero({3, 4}, 3);
  // Sums away from the kink: a + b with b a small multiple of a keeps the sign of a.
  const auto join = [](const std::vector<Variable>& v) { return std::vector<Variable>{F::add_relu(v[0], v[0] * 0.5 + v[1] * 0.01)}; };
  check_gradients(join, {x1, x2});
  check_forward_dtypes([](const std::vector<Variable>& v) { return std::vector<Variable>{F::add_relu(v[0], v[1])}; },
                       {x1, x2});
  expect_error<ShapeError>([] { F::add_relu(Variable(Array::zeros({2, 3})), Variable(Array::zeros({3}))); },
                           {"add_relu", "(2, 3)", "(3,)"});
  expect_error<DtypeError>([] { F::add_relu(Variable(Array::zeros({2}, Dtype::int32)), Variable(Array::zeros({2}, Dtype::int32))); },
                           {"add_relu", "int32"});
}

TEST_CASE("elu's gradient is differentiable, giving alpha e^x below zero") {
  Variable x(Array::from_vector<double>({-1.0, 2.0}, {2}));
  Variable y = F::elu(x, 2.0);
  y.set_grad(Array::ones({2}, Dtype::float64));
  y.backward({.enable_double_backprop = true});
  Variable gx = x.grad_var();
  expect_values(gx.data(), {2 * std::exp(-1.0), 1.0}, 1e-12);
  x.cleargrad();
  gx.set_grad(Array::ones({2}, Dtype::float64));
  gx.backward();
  expect_values(x.grad(), {2 * std::exp(-1.0), 0.0}, 1e-12);
}

TEST_CASE("sigmoid and tanh match finite differences, twice") {
  const Array x = random({3, 4}, 2, Dtype::float64, -3, 3);
  check_gradients(unary(F::sigmoid), {x});
  check_gradients(unary(F::tanh), {x});
}

TEST_CASE("activations agree with float64 in float32, float16 and bfloat16") {
  const Array x = random({3, 5}, 3, Dtype::float64, -3, 3);
  check_forward_dtypes(unary(F::relu), {x});
  check_forward_dtypes(unary([](const Variable& v) { return F::leaky_relu(v); }), {x});
  check_forward_dtypes(unary([](const Variable& v) { return F::elu(v); }), {x});
  check_forward_dtypes(unary(F::sigmoid), {x});
  check_forward_dtypes(unary(F::tanh), {x});
  check_forward_dtypes(unary([](const Variable& v) { return F::softmax(v); }), {x});
  check_forward_dtypes(unary([](const Variable& v) { return F::log_softmax(v); }), {x}, 2);
}

TEST_CASE("softmax and log_softmax compute normalised values along an axis") {
  const Variable x = constant({1, 2, 3, 0.5, -1, 2}, {2, 3});
  expect_values(F::softmax(x).data(), {0.09003057317038043, 0.24472847105479767, 0.6652409557748219,
                                       0.17529039214003667, 0.03911257327068745, 0.7855970345892759}, 1e-12);
  expect_values(F::log_softmax(x).data(), {-2.4076059644443806, -1.4076059644443804, -0.40760596444438035,
                                           -1.7413112966571571, -3.241311296657157, -0.24131129665715703}, 1e-12);
  const Variable along_rows = F::softmax(x, 0);
  expect_values(along_rows.data(), {1 / (1 + std::exp(-0.5)), 1 / (1 + std::exp(-3.0)), 1 / (1 + std::exp(-1.0)),
                                    1 / (1 + std::exp(0.5)), 1 / (1 + std::exp(3.0)), 1 / (1 + std::exp(1.0))},
                1e-12);
  expect_close(F::softmax(x, -1).data(), F::softmax(x, 1).data());
}

TEST_CASE("softmax and log_softmax do not overflow on large inputs") {
  for (Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::float64}) {
    INFO("dtype ", dtype);
    const Variable x(Array::from_vector<double>({1000, 0, -1000}, {1, 3}, dtype), false);
    expect_values(F::softmax(x).data(), {1, 0, 0});
    expect_values(F::log_softmax(x).data(), {0, -1000, -2000});  // exact in float16 too
  }
}

TEST_CASE("softmax and log_softmax match finite differences, twice, along every axis") {
  const Array x = random({2, 3, 4}, 4, Dtype::float64, -2, 2);
  for (int64_t axis : {0, 1, 2, -1}) {
    INFO("axis ", axis);
    check_gradients(unary([axis](const Variable& v) { return F::softmax(v, axis); }), {x});
    check_gradients(unary([axis](const Variable& v) { return F::log_softmax(v, axis); }), {x});
  }
}

TEST_CASE("activations reject integer inputs and bad axes") {
  const Variable ints(Array::zeros({2, 3}, Dtype::int32));
  expect_error<DtypeError>([&] { F::relu(ints); }, {"relu", "floating", "int32"});
  expect_error<DtypeError>([&] { F::sigmoid(ints); }, {"sigmoid", "int32"});
  expect_error<DtypeError>([&] { F::softmax(ints); }, {"softmax", "int32"});
  const Variable x(Array::zeros({2, 3}));
  expect_error<IndexError>([&] { F::softmax(x, 2); }, {"softmax", "2"});
  expect_error<IndexError>([&] { F::log_softmax(x, -3); }, {"log_softmax", "-3"});
}
