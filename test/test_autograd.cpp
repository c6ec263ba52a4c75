#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

TEST_CASE("backward accumulates through shared subexpressions") {
  Variable x(Array::from_vector<double>({2.0}, {}));
  Variable y = x * x + x * 3.0;  // dy/dx = 2x + 3 = 7
  y.backward();
  expect_values(x.grad(), {7.0});
  y = x * x;
  y.backward();  // leaf gradients accumulate until cleared
  expect_values(x.grad(), {11.0});
  x.cleargrad();
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("double backprop gives the second derivative") {
  Variable x(Array::from_vector<double>({1.5}, {}));
  Variable y = x * x * x;  // y' = 3x^2, y'' = 6x
  y.backward({.enable_double_backprop = true});
  Variable gx = x.grad_var();
  expect_values(gx.data(), {3 * 1.5 * 1.5});
  x.cleargrad();
  gx.backward();
  expect_values(x.grad(), {6 * 1.5});
}

TEST_CASE("without double backprop the gradient has no graph") {
  Variable x(Array::from_vector<double>({1.5}, {}));
  (x * x).backward();
  CHECK(x.grad_var().creator() == nullptr);
}

TEST_CASE("backward from a non-scalar needs a gradient") {
  Variable x(Array::zeros({2, 3}));
  Variable y = x * 2.0;
  expect_error<ShapeError>([&] { y.backward(); }, {"backward", "(2, 3)"});
  y.set_grad(Array::ones({2, 3}));
  y.backward();
  expect_values(x.grad(), {2, 2, 2, 2, 2, 2});
}

TEST_CASE("retained arrays are released once the node ran") {
  Variable x(Array::from_vector<double>({1.0, 2.0}, {2}));
  Variable y = x * x;
  y.set_grad(Array::ones({2}, Dtype::float64));
  y.backward();
  expect_error<ValueError>([&] { y.backward(); }, {"Mul", "released"});
}

TEST_CASE("retain_grad keeps intermediate gradients; loss_scale scales the seed") {
  Variable x(Array::from_vector<double>({3.0}, {}));
  Variable h = x * 2.0;
  Variable y = h * h;
  y.backward({.retain_grad = true, .loss_scale = 8.0});
  expect_values(h.grad(), {8.0 * 2 * 6});
  expect_values(x.grad(), {8.0 * 2 * 6 * 2});
  Variable h2 = x * 2.0;
  (h2 * h2).backward();
  CHECK_FALSE(h2.grad().defined());
}

TEST_CASE("no_backprop_mode records nothing and force_backprop_mode overrides it") {
  Variable x(Array::ones({2}));
  {
    auto guard = no_backprop_mode();
    CHECK((x * 2.0).creator() == nullptr);
    {
      auto force = force_backprop_mode();
      CHECK((x * 2.0).creator() != nullptr);
    }
    CHECK_FALSE(is_backprop_enabled());
  }
  CHECK(is_backprop_enabled());
  CHECK((x * 2.0).creator() != nullptr);
}

TEST_CASE("unchain_backward cuts the graph") {
  Variable x(Array::ones({}));
  Variable h = x * 2.0;
  Variable y = h * 3.0;
  h.unchain_backward();
  CHECK(h.creator() == nullptr);
  y.backward();
  expect_values(h.grad(), {3.0});
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("gradient hooks run once a gradient is final, in backward order") {
  Variable a(Array::ones({})), b(Array::ones({}));
  std::vector<std::string> order;
  a.register_gradient_hook([&](const Variable& v) {
    order.push_back("a");
    CHECK(v.grad().item<float>() == doctest::Approx(6.0));
  });
  const int64_t id = b.register_gradient_hook([&](const Variable&) { order.push_back("b"); });
  Variable h = a * 2.0;
  Variable y = (h + a) * 2.0 + b;  // dy/da = 2 * (2 + 1) = 6
  y.backward();
  REQUIRE(order.size() == 2);
  CHECK(order[0] == "b");
  CHECK(order[1] == "a");
  b.remove_gradient_hook(id);
  a.cleargrad();
  (b * 1.0).backward();
  CHECK(order.size() == 2);
}

TEST_CASE("intermediate data is freed when nothing retains it") {
  const AllocatorStats before = allocator_for(default_device().type).stats();
  Variable x(Array::ones({1024, 1024}));
  Variable y;
  {
    Variable h = x + x;  // Add retains nothing, so h's data dies with h
    y = h * 2.0;         // Mul retains h and the constant; y's graph keeps them
  }
  Variable z = x + 1.0;
  const int64_t mib = 1 << 20;
  const int64_t held = allocator_for(default_device().type).stats().bytes_in_use - before.bytes_in_use;
  CHECK(held >= 4 * 4 * mib - 1024);  // x, h (retained by Mul), y, z
  CHECK(held < 5 * 4 * mib);
}

TEST_CASE("gradient_check reports a wrong backward") {
  class WrongSquare final : public FunctionNode {
   public:
    std::string label() const override { return "WrongSquare"; }
    std::vector<Array> forward(const std::vector<Array>& x) override {
      retain_inputs({0});
      return {ops::square(x[0])};
    }
    std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
      return {gy[0] * get_retained_inputs()[0] * 3.0};
    }
  };
  auto f = [](const std::vector<Variable>& x) { return std::make_shared<WrongSquare>()->apply(x); };
  expect_error<gradient_check::GradientCheckError>(
      [&] { gradient_check::check_backward(f, {random({3}, 1)}, {random({3}, 2)}); },
      {"input 0", "finite differences"});
}

namespace {
// Passes its input through and hands back no gradient for it (as a function of integer results would).
class GradientBlocker final : public FunctionNode {
 public:
  std::string label() const override { return "GradientBlocker"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {x[0].copy()}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>&) override {
    return {Variable()};
  }
};
}  // namespace

TEST_CASE("a variable's gradient becomes final even when one of its consumers receives no gradient") {
  Variable x(Array::from_vector<double>({1.0, 2.0}, {2}));
  Variable h = x * 2.0;
  Variable blocked = std::make_shared<GradientBlocker>()->apply({F::exp(h)})[0];  // exp(h) gets no gradient
  Variable loss = F::sum(blocked) + F::sum(h * 3.0);                                // d loss / dx = 3 * 2
  int hook_calls = 0;
  h.register_gradient_hook([&](const Variable& v) {
    ++hook_calls;
    expect_values(v.grad(), {3.0, 3.0});
  });
  loss.backward(BackwardOptions{.retain_grad = true});
  expect_values(x.grad(), {6.0, 6.0});
  CHECK(hook_calls == 1);
}

TEST_CASE("backward from a hook over the graph still being walked is refused") {
  Variable x(Array::from_vector<double>({1.0}, {}));
  Variable h = x * 2.0;
  Variable loss = h * h;
  h.register_gradient_hook([&](const Variable&) { loss.backward(); });
  expect_error<ValueError>([&] { loss.backward(); }, {"unfinished backward"});
  Variable fresh = x * 5.0;  // a later, separate graph works
  x.cleargrad();
  fresh.backward();
  expect_values(x.grad(), {5.0});
}
