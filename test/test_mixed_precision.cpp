#include <cmath>
#include <limits>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;
namespace O = kusari::optimizers;

namespace {

// y = W2 relu(W1 x + b1) + b2: two F::linear layers with a ReLU between them.
class TinyMLP : public L::Cloneable<TinyMLP, L::Link> {
 public:
  TinyMLP(Dtype dtype, int64_t in, int64_t hidden, int64_t out) {
    add_param("W1", Array::normal({hidden, in}, 0, 0.5, 11).astype(dtype));
    add_param("b1", Array::zeros({hidden}, dtype));
    add_param("W2", Array::normal({out, hidden}, 0, 0.4, 12).astype(dtype));
    add_param("b2", Array::zeros({out}, dtype));
  }
  // x has shape (N, in).
  Variable forward(const Variable& x) override {
    const Variable h = F::relu(F::linear(x, param("W1"), param("b1")));
    return F::linear(h, param("W2"), param("b2"));
  }
};

// A fixed regression problem: 32 samples of 4 features, 2 targets from a fixed nonlinear teacher.
struct Problem {
  Array x = Array::uniform({32, 4}, -1, 1, 5);
  Array t;
  Problem() {
    const std::vector<double> xs = x.to_vector<double>();
    std::vector<double> ts;
    for (size_t i = 0; i < 32; ++i) {
      const double* r = &xs[4 * i];
      ts.push_back(0.5 * r[0] - 0.3 * r[1] + 0.2 * std::abs(r[2]));
      ts.push_back(0.4 * r[3] + 0.1 * r[0] * r[1] - 0.2);
    }
    t = Array::from_vector<double>(ts, {32, 2}, Dtype::float32);
  }
  // Mean squared error of the model on the problem, computed in the model's dtype.
  Variable loss(L::Link& model) const {
    const Dtype dtype = model.params().front().dtype();
    const Variable diff = model(Variable(x.astype(dtype), false)) - Variable(t.astype(dtype), false);
    return F::sum_to(F::square(diff), Shape{}) * (1.0 / 32);
  }
};

// The loss of `model`'s parameters evaluated in float32.
double float32_loss(const TinyMLP& model, const Problem& problem) {
  TinyMLP copy(Dtype::float32, 4, 8, 2);
  for (const std::string name : {"W1", "b1", "W2", "b2"}) copy.param(name).data().assign(model.param(name).data());
  return problem.loss(copy).item<double>();
}

}  // namespace

TEST_CASE("use_fp32_update keeps a float32 master copy so tiny steps accumulate") {
  for (const Dtype dtype : {Dtype::float16, Dtype::bfloat16}) {
    INFO(dtype_name(dtype));
    for (const bool fp32 : {false, true}) {
      auto link = std::make_shared<L::Link>();
      link->add_param("w", Array::ones({3}, dtype));
      O::SGD opt(1e-4);
      opt.setup(link);
      if (fp32) opt.use_fp32_update();
      for (int i = 0; i < 10; ++i) {
        link->param("w").set_grad(Array::ones({3}, dtype));
        opt.update();
      }
      CHECK(link->param("w").dtype() == dtype);
      if (!fp32) {
        expect_values(link->param("w").data(), {1, 1, 1}, 0);
        CHECK_FALSE(opt.update_rule("/w").states().contains("master"));
        continue;
      }
      const Array& master = opt.update_rule("/w").states().at("master");
      CHECK(master.dtype() == Dtype::float32);
      expect_values(master, {0.999, 0.999, 0.999}, 1e-6);
      expect_values(link->param("w").data(), Array::full({3}, 0.999, dtype).to_vector<double>(), 0);
    }
  }
}

TEST_CASE("use_fp32_update keeps optimizer state in float32 and leaves float32 parameters alone") {
  auto link = std::make_shared<L::Link>();
  link->add_param("h", Array::ones({2}, Dtype::float16));
  link->add_param("f", Array::ones({2}, Dtype::float32));
  O::Adam opt;
  opt.use_fp32_update();
  opt.setup(link);
  link->param("h").set_grad(Array::ones({2}, Dtype::float16));
  link->param("f").set_grad(Array::ones({2}, Dtype::float32));
  opt.update();
  CHECK(opt.update_rule("/h").states().at("m").dtype() == Dtype::float32);
  CHECK(opt.update_rule("/h").states().contains("master"));
  CHECK_FALSE(opt.update_rule("/f").states().contains("master"));
}

TEST_CASE("LossScaler: fixed and dynamic behaviour, limits and bad options") {
  O::LossScaler fixed = O::LossScaler::fixed(128);
  fixed.record(false);
  CHECK(fixed.scale() == 128);
  CHECK_FALSE(fixed.is_dynamic());

  O::LossScaler dynamic = O::LossScaler::dynamic();
  CHECK(dynamic.scale() == 65536);
  CHECK(dynamic.options().growth_interval == 2000);
  CHECK(dynamic.options().max_scale == 16777216);
  for (int i = 0; i < 1999; ++i) dynamic.record(true);
  CHECK(dynamic.scale() == 65536);
  dynamic.record(true);
  CHECK(dynamic.scale() == 131072);
  CHECK(dynamic.clean_steps() == 0);
  dynamic.record(true);
  dynamic.record(false);
  CHECK(dynamic.scale() == 65536);
  CHECK(dynamic.clean_steps() == 0);

  O::LossScaler capped = O::LossScaler::dynamic({.initial_scale = 4, .growth_interval = 1, .max_scale = 8,
                                                 .min_scale = 2});
  for (int i = 0; i < 3; ++i) capped.record(true);
  CHECK(capped.scale() == 8);
  for (int i = 0; i < 3; ++i) capped.record(false);
  CHECK(capped.scale() == 2);

  expect_error<ValueError>([] { O::LossScaler::fixed(0); }, {"LossScaler", "positive scale", "0"});
  expect_error<ValueError>([] { O::LossScaler::dynamic({.growth_interval = 0}); }, {"growth_interval >= 1"});
  expect_error<ValueError>([] { O::LossScaler::dynamic({.factor = 1}); }, {"factor > 1"});
  expect_error<ValueError>([] { O::LossScaler::dynamic({.initial_scale = 1e9}); },
                           {"min_scale <= initial_scale <= max_scale"});
}

TEST_CASE("a static loss scale is divided out before the update") {
  const Problem problem;
  auto plain = std::make_shared<TinyMLP>(Dtype::float32, 4, 8, 2);
  auto scaled = std::make_shared<TinyMLP>(Dtype::float32, 4, 8, 2);
  O::MomentumSGD a(0.1), b(0.1);
  a.setup(plain);
  b.setup(scaled);
  b.set_loss_scaler(O::LossScaler::fixed(1024));
  for (int i = 0; i < 5; ++i) {
    CHECK(a.update([&] { return problem.loss(*plain); }));
    CHECK(b.update([&] { return problem.loss(*scaled); }));
  }
  for (const std::string name : {"W1", "b1", "W2", "b2"}) {
    expect_close(scaled->param(name).data(), plain->param(name).data(), 1e-6, 1e-5);
  }
}

TEST_CASE("float16 training with fp32 master weights and dynamic loss scaling tracks the float32 run") {
  const Problem problem;
  const int steps = 150;
  auto reference = std::make_shared<TinyMLP>(Dtype::float32, 4, 8, 2);
  O::MomentumSGD reference_opt(0.05, 0.9);
  reference_opt.setup(reference);
  const double initial_loss = problem.loss(*reference).item<double>();
  for (int i = 0; i < steps; ++i) reference_opt.update([&] { return problem.loss(*reference); });

  auto half = std::make_shared<TinyMLP>(Dtype::float16, 4, 8, 2);
  O::MomentumSGD half_opt(0.05, 0.9);
  half_opt.setup(half);
  half_opt.use_fp32_update();
  half_opt.set_loss_scaler(O::LossScaler::dynamic());
  int skipped = 0;
  while (half_opt.t() < steps) {
    if (!half_opt.update([&] { return problem.loss(*half); })) ++skipped;
    REQUIRE(skipped < 10);
  }
  // 2^16 itself is inf in float16, so the first step overflows and the scale settles at 2^15.
  CHECK(skipped >= 1);
  CHECK(half_opt.loss_scale() <= 32768);

  const double reference_loss = problem.loss(*reference).item<double>();
  const double half_loss = float32_loss(*half, problem);
  INFO("initial ", initial_loss, ", float32 ", reference_loss, ", float16 ", half_loss);
  CHECK(reference_loss < 0.5 * initial_loss);
  CHECK(std::abs(half_loss - reference_loss) <= 0.05 * reference_loss + 1e-3);
  for (const std::string name : {"W1", "b1", "W2", "b2"}) {
    INFO(name);
    expect_close(half->param(name).data(), reference->param(name).data(), 2e-2, 2e-2);
  }
}

TEST_CASE("an injected inf skips exactly one step and halves the scale") {
  const Problem problem;
  auto model = std::make_shared<TinyMLP>(Dtype::float16, 4, 8, 2);
  O::Adam opt({.lr = 1e-3});
  opt.setup(model);
  opt.use_fp32_update();
  opt.set_loss_scaler(O::LossScaler::dynamic({.initial_scale = 1024}));
  for (int i = 0; i < 3; ++i) CHECK(opt.update([&] { return problem.loss(*model); }));
  const std::vector<double> before = model->param("W1").data().to_vector<double>();
  const std::vector<double> master_before = opt.update_rule("/W1").states().at("master").to_vector<double>();

  const bool stepped = opt.update([&] { return problem.loss(*model) * std::numeric_limits<double>::infinity(); });
  CHECK_FALSE(stepped);
  CHECK(opt.t() == 3);
  CHECK(opt.update_rule("/W1").t() == 3);
  CHECK(opt.loss_scale() == 512);
  CHECK(opt.loss_scaler()->clean_steps() == 0);
  CHECK(model->param("W1").data().to_vector<double>() == before);
  CHECK(opt.update_rule("/W1").states().at("master").to_vector<double>() == master_before);

  CHECK(opt.update([&] { return problem.loss(*model); }));
  CHECK(opt.t() == 4);
  CHECK(opt.loss_scale() == 512);
  CHECK(opt.loss_scaler()->clean_steps() == 1);
}

TEST_CASE("the finite check can be replaced, as a distributed wrapper does to agree across ranks") {
  const Problem problem;
  auto model = std::make_shared<TinyMLP>(Dtype::float16, 4, 8, 2);
  O::SGD opt(0.01);
  opt.setup(model);
  opt.set_loss_scaler(O::LossScaler::dynamic({.initial_scale = 256}));
  std::vector<bool> seen;
  opt.set_finite_check([&](bool locally_finite) {
    seen.push_back(locally_finite);
    return false;  // another rank overflowed
  });
  CHECK_FALSE(opt.update([&] { return problem.loss(*model); }));
  CHECK(seen == std::vector<bool>{true});
  CHECK(opt.t() == 0);
  CHECK(opt.loss_scale() == 128);
}

TEST_CASE("gradients of half parameters reach hooks in float32, divided by the scale") {
  auto link = std::make_shared<L::Link>();
  link->add_param("w", Array::ones({2}, Dtype::float16));
  O::SGD opt(0.5);
  opt.setup(link);
  opt.set_loss_scaler(O::LossScaler::fixed(64));
  std::vector<double> seen;
  opt.add_hook([&](O::Optimizer&, std::vector<O::GradientEntry>& entries) {
    CHECK(entries.at(0).grad.dtype() == Dtype::float32);
    seen = entries.at(0).grad.to_vector<double>();
  }, "probe");
  link->param("w").set_grad(Array::full({2}, 64 * 0.25, Dtype::float16));
  opt.update();
  CHECK(seen == std::vector<double>{0.25, 0.25});
  expect_values(link->param("w").data(), {0.875, 0.875}, 0);
}
