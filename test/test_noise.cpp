#include "testing.h"

#include <cmath>

using namespace kusari;
using namespace kusari::testing;

TEST_CASE("dropout zeroes about ratio of the elements and scales the rest by 1 / (1 - ratio)") {
  manual_seed(7);
  const Variable x(Array::ones({100, 100}));
  const std::vector<double> y = F::dropout(x, 0.25).data().to_vector<double>();
  int64_t dropped = 0;
  for (double v : y) {
    CHECK((v == 0.0 || std::abs(v - 1 / 0.75) < 1e-6));
    dropped += v == 0.0;
  }
  CHECK(dropped > 2300);
  CHECK(dropped < 2700);
}

TEST_CASE("dropout's mask is deterministic per seed and advances the default generator") {
  const Variable x(random({4, 5}, 1, Dtype::float32));
  manual_seed(3);
  const Array first = F::dropout(x).data();
  CHECK(default_generator().offset() == 20);
  const Array second = F::dropout(x).data();
  CHECK(default_generator().offset() == 40);
  manual_seed(3);
  expect_close(F::dropout(x).data(), first, 0, 0);
  expect_close(F::dropout(x).data(), second, 0, 0);
  CHECK(first.to_vector<float>() != second.to_vector<float>());
}

TEST_CASE("dropout's backward multiplies by the same mask") {
  manual_seed(11);
  Variable x(random({3, 4}, 2));
  Variable y = F::dropout(x, 0.5);
  y.set_grad(Array::ones({3, 4}, Dtype::float64));
  y.backward();
  // With x all nonzero, y / x is the mask itself.
  expect_close(x.grad(), ops::div(y.data(), x.data()), 1e-12, 1e-12);
}

TEST_CASE("dropout matches finite differences, twice, under a fixed mask") {
  // Reseeding inside the function makes every evaluation draw the same mask.
  const auto f = unary([](const Variable& v) {
    manual_seed(5);
    return F::dropout(v, 0.4);
  });
  check_gradients(f, {random({3, 4}, 3)});
  check_forward_dtypes(f, {random({3, 4}, 3)});
}

TEST_CASE("dropout is the identity outside training mode and with ratio 0") {
  const Variable x(random({3, 4}, 4));
  {
    auto eval = using_train_mode(false);
    manual_seed(0);
    CHECK(F::dropout(x, 0.9).is(x));
    CHECK(default_generator().offset() == 0);
  }
  expect_close(F::dropout(x, 0.0).data(), x.data(), 0, 0);
}

TEST_CASE("dropout rejects ratios outside [0, 1) and integer inputs") {
  const Variable x(Array::zeros({2}));
  expect_error<ValueError>([&] { F::dropout(x, 1.0); }, {"dropout", "[0, 1)", "1"});
  expect_error<ValueError>([&] { F::dropout(x, -0.1); }, {"dropout", "-0.1"});
  expect_error<DtypeError>([&] { F::dropout(Variable(Array::zeros({2}, Dtype::int64))); }, {"dropout", "int64"});
}
