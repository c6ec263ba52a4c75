#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;
namespace O = kusari::optimizers;

namespace {

// Two parameters in float64: W = [1, -2] and b = [0.5].
class TwoParams : public L::Cloneable<TwoParams, L::Link> {
 public:
  TwoParams() {
    add_param("W", Array::from_vector<double>({1, -2}, {2}));
    add_param("b", Array::from_vector<double>({0.5}, {1}));
  }
};

// Sets the gradients used by the hand-computed cases: gW = [0.5, 1], gb = [-1].
void set_fixed_grads(const L::Link& link) {
  link.param("W").set_grad(Array::from_vector<double>({0.5, 1}, {2}));
  link.param("b").set_grad(Array::from_vector<double>({-1}, {1}));
}

// A link with W and b set by hand gradients, an optimizer attached, after `steps` updates.
std::shared_ptr<TwoParams> step_fixed(O::Optimizer& optimizer, int steps = 1) {
  auto link = std::make_shared<TwoParams>();
  optimizer.setup(link);
  for (int i = 0; i < steps; ++i) {
    set_fixed_grads(*link);
    CHECK(optimizer.update());
  }
  return link;
}

void expect_params(const L::Link& link, const std::vector<double>& w, const std::vector<double>& b,
                   double atol = 1e-12) {
  expect_values(link.param("W").data(), w, atol);
  expect_values(link.param("b").data(), b, atol);
}

// The quadratic problem of the multi-step tests: loss = Σ a (p − c)², so g = 2a(p − c).
const std::map<std::string, std::vector<double>> kCoefficient = {{"W", {1.0, 3.0}}, {"b", {2.0}}};
const std::map<std::string, std::vector<double>> kCenter = {{"W", {0.3, 0.7}}, {"b", {-0.4}}};

Variable quadratic_loss(const L::Link& link) {
  Variable total;
  for (const std::string name : {"W", "b"}) {
    const Shape shape{static_cast<int64_t>(kCenter.at(name).size())};
    Variable a(Array::from_vector<double>(kCoefficient.at(name), shape), false);
    Variable c(Array::from_vector<double>(kCenter.at(name), shape), false);
    Variable term = F::sum_to(a * F::square(link.param(name) - c), Shape{});
    total = total.defined() ? total + term : term;
  }
  return total;
}

using Vec = std::vector<double>;
using State = std::map<std::string, Vec>;
// One reference step on a parameter's values w given its gradient g, its state and the step t ≥ 1.
using Reference = std::function<void(Vec& w, const Vec& g, State& s, int t, const std::string& name)>;

double norm(const Vec& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

Vec& zeros_like(State& s, const std::string& key, const Vec& w) {
  if (!s.contains(key)) s[key] = Vec(w.size(), 0.0);
  return s[key];
}

// Runs `steps` updates of the quadratic problem with the optimizer and with the reference and compares.
void check_against_reference(O::Optimizer& optimizer, const Reference& reference, int steps = 6,
                             const std::function<void(O::Optimizer&, int)>& before_step = nullptr) {
  auto link = std::make_shared<TwoParams>();
  optimizer.setup(link);
  std::map<std::string, Vec> ws = {{"W", {1, -2}}, {"b", {0.5}}};
  std::map<std::string, State> states;
  for (int t = 1; t <= steps; ++t) {
    if (before_step) before_step(optimizer, t);
    CHECK(optimizer.update([&] { return quadratic_loss(*link); }));
    for (auto& [name, w] : ws) {
      Vec g(w.size());
      for (size_t i = 0; i < w.size(); ++i) g[i] = 2 * kCoefficient.at(name)[i] * (w[i] - kCenter.at(name)[i]);
      reference(w, g, states[name], t, name);
    }
  }
  CHECK(optimizer.t() == steps);
  expect_params(*link, ws["W"], ws["b"], 1e-10);
}

// Stores everything it is given in memory; loading leaves values alone whose key it lacks.
class MemorySerializer : public Serializer {
 public:
  struct Store {
    std::map<std::string, Array> arrays;
    std::map<std::string, double> doubles;
    std::map<std::string, int64_t> integers;
  };
  MemorySerializer(bool loading, std::shared_ptr<Store> store, std::string prefix = "")
      : loading_(loading), store_(std::move(store)), prefix_(std::move(prefix)) {}

  Serializer& operator[](const std::string& name) override {
    auto& child = children_[name];
    if (!child) child = std::make_unique<MemorySerializer>(loading_, store_, prefix_ + name + "/");
    return *child;
  }
  void operator()(const std::string& key, Array& value) override {
    if (!loading_) {
      store_->arrays[prefix_ + key] = value.defined() ? value.copy() : Array();
      return;
    }
    auto it = store_->arrays.find(prefix_ + key);
    if (it == store_->arrays.end()) return;
    if (!it->second.defined()) {
      value = Array();
    } else if (value.defined()) {
      value.assign(it->second);
    } else {
      value = it->second.copy();
    }
  }
  void operator()(const std::string& key, double& value) override { visit(store_->doubles, key, value); }
  void operator()(const std::string& key, int64_t& value) override { visit(store_->integers, key, value); }
  bool is_loading() const override { return loading_; }

 private:
  template <class T>
  void visit(std::map<std::string, T>& values, const std::string& key, T& value) {
    if (!loading_) {
      values[prefix_ + key] = value;
    } else if (auto it = values.find(prefix_ + key); it != values.end()) {
      value = it->second;
    }
  }

  bool loading_;
  std::shared_ptr<Store> store_;
  std::string prefix_;
  std::map<std::string, std::unique_ptr<MemorySerializer>> children_;
};

}  // namespace

TEST_CASE("SGD: hand-computed step, coupled weight decay, and the formula over several steps") {
  O::SGD sgd(0.1);
  expect_params(*step_fixed(sgd), {0.95, -2.1}, {0.6});
  O::SGD decayed(0.1, 0.1);
  expect_params(*step_fixed(decayed), {0.94, -2.08}, {0.595});
  O::SGD reference_sgd(0.05);
  check_against_reference(reference_sgd, [](Vec& w, const Vec& g, State&, int, const std::string&) {
    for (size_t i = 0; i < w.size(); ++i) w[i] -= 0.05 * g[i];
  });
}

TEST_CASE("MomentumSGD: v = m v - lr g; w += v") {
  O::MomentumSGD momentum(0.1, 0.9);
  expect_params(*step_fixed(momentum, 2), {0.855, -2.29}, {0.79});
  O::MomentumSGD decayed(0.05, 0.8, 0.01);
  check_against_reference(decayed, [](Vec& w, const Vec& g, State& s, int, const std::string&) {
    Vec& v = zeros_like(s, "v", w);
    for (size_t i = 0; i < w.size(); ++i) {
      v[i] = 0.8 * v[i] - 0.05 * (g[i] + 0.01 * w[i]);
      w[i] += v[i];
    }
  });
}

TEST_CASE("MomentumSGD with momentum correction rescales v when lr changes") {
  O::MomentumSGD corrected(0.1, 0.9);
  corrected.set_momentum_correction(true);
  CHECK(corrected.momentum_correction());
  auto lr_at = [](int t) { return t <= 2 ? 0.05 : 0.1 * t; };
  check_against_reference(
      corrected,
      [&](Vec& w, const Vec& g, State& s, int t, const std::string&) {
        Vec& v = zeros_like(s, "v", w);
        const double ratio = t == 1 ? 1 : lr_at(t) / lr_at(t - 1);
        for (size_t i = 0; i < w.size(); ++i) {
          v[i] = 0.9 * ratio * v[i] - lr_at(t) * g[i];
          w[i] += v[i];
        }
      },
      5, [&](O::Optimizer& o, int t) { o.set_lr(lr_at(t)); });
}

TEST_CASE("NesterovAG: Chainer's form") {
  O::NesterovAG nesterov(0.1, 0.9);
  expect_params(*step_fixed(nesterov), {0.8645, -2.271}, {0.771});
  O::NesterovAG reference(0.05, 0.7, 0.02);
  check_against_reference(reference, [](Vec& w, const Vec& g0, State& s, int, const std::string&) {
    Vec& v = zeros_like(s, "v", w);
    for (size_t i = 0; i < w.size(); ++i) {
      const double g = g0[i] + 0.02 * w[i];
      v[i] = 0.7 * v[i] - 0.05 * g;
      w[i] += 0.49 * v[i] - 1.7 * 0.05 * g;
    }
  });
}

TEST_CASE("RMSprop: ms = a ms + (1 - a) g^2; w -= lr g / (sqrt(ms) + eps)") {
  O::RMSprop rmsprop(0.1, 0.9, 0);
  CHECK(rmsprop.alpha() == 0.9);
  expect_params(*step_fixed(rmsprop), {1 - 0.316227766016838, -2.316227766016838}, {0.816227766016838}, 1e-12);
  O::RMSprop reference(0.01, 0.95, 1e-3, 0.01);
  check_against_reference(reference, [](Vec& w, const Vec& g0, State& s, int, const std::string&) {
    Vec& ms = zeros_like(s, "ms", w);
    for (size_t i = 0; i < w.size(); ++i) {
      const double g = g0[i] + 0.01 * w[i];
      ms[i] = 0.95 * ms[i] + 0.05 * g * g;
      w[i] -= 0.01 * g / (std::sqrt(ms[i]) + 1e-3);
    }
  });
}

TEST_CASE("Adam: the first step moves every weight by lr against the gradient's sign") {
  O::Adam adam({.lr = 0.1, .eps = 0});
  expect_params(*step_fixed(adam), {0.9, -2.1}, {0.6});
  O::Adam coupled({.lr = 0.1, .eps = 0, .weight_decay_rate = 0.1});
  expect_params(*step_fixed(coupled), {0.9, -2.1}, {0.6});
  O::Adam adamw({.lr = 0.1, .eps = 0, .weight_decay_rate = 0.1, .decoupled_weight_decay = true});
  expect_params(*step_fixed(adamw), {0.8, -1.9}, {0.55});
}

TEST_CASE("Adam, AMSGrad and AdamW against their formulas") {
  for (const bool amsgrad : {false, true}) {
    for (const bool decoupled : {false, true}) {
      INFO("amsgrad ", amsgrad, ", decoupled ", decoupled);
      O::Adam adam({.lr = 0.05, .beta1 = 0.8, .beta2 = 0.9, .eps = 1e-4, .eta = 0.7, .weight_decay_rate = 0.03,
                    .amsgrad = amsgrad, .decoupled_weight_decay = decoupled});
      check_against_reference(adam, [&](Vec& w, const Vec& g0, State& s, int t, const std::string&) {
        Vec& m = zeros_like(s, "m", w);
        Vec& v = zeros_like(s, "v", w);
        Vec& v_max = zeros_like(s, "v_max", w);
        for (size_t i = 0; i < w.size(); ++i) {
          const double g = decoupled ? g0[i] : g0[i] + 0.03 * w[i];
          m[i] = 0.8 * m[i] + 0.2 * g;
          v[i] = 0.9 * v[i] + 0.1 * g * g;
          v_max[i] = std::max(v_max[i], v[i]);
          const double m_hat = m[i] / (1 - std::pow(0.8, t));
          const double v_hat = (amsgrad ? v_max[i] : v[i]) / (1 - std::pow(0.9, t));
          w[i] -= 0.7 * (0.05 * m_hat / (std::sqrt(v_hat) + 1e-4) + (decoupled ? 0.03 * w[i] : 0));
        }
      });
    }
  }
}

TEST_CASE("LARS: hand-computed trust ratios, skip list, clip variant") {
  O::LARS lars({.lr = 1, .eta = 0.1, .eps = 0});
  expect_params(*step_fixed(lars), {0.9, -2.2}, {0.55});

  O::LARS skipping({.lr = 1, .eta = 0.1, .eps = 0});
  auto link = std::make_shared<TwoParams>();
  skipping.setup(link);
  CHECK(O::exclude_from_weight_decay(skipping) == 1);
  CHECK(skipping.update_rule("/b").lars_skip());
  CHECK_FALSE(skipping.update_rule("/W").lars_skip());
  set_fixed_grads(*link);
  skipping.update();
  expect_params(*link, {0.9, -2.2}, {1.5});

  O::LARS clipped({.lr = 0.1, .eta = 0.1, .eps = 0, .clip = true});
  expect_params(*step_fixed(clipped), {0.95, -2.1}, {0.55});
}

TEST_CASE("LARS against its formula, with the bias on the skip list") {
  for (const bool clip : {false, true}) {
    INFO("clip ", clip);
    const double lr = 0.5, eta = 0.02, beta = 0.01, eps = 1e-9, m = 0.9;
    O::LARS lars({.lr = lr, .momentum = m, .eta = eta, .weight_decay_rate = beta, .eps = eps, .clip = clip});
    check_against_reference(
        lars,
        [&](Vec& w, const Vec& g, State& s, int, const std::string& name) {
          Vec& v = zeros_like(s, "v", w);
          const bool skip = name == "b";
          const double b = skip ? 0 : beta;
          const double ratio = eta * norm(w) / (norm(g) + b * norm(w) + eps);
          const double rate = skip ? lr : clip ? std::min(lr, ratio) : lr * ratio;
          for (size_t i = 0; i < w.size(); ++i) v[i] = m * v[i] + rate * (g[i] + b * w[i]);
          for (size_t i = 0; i < w.size(); ++i) w[i] -= v[i];
        },
        6, [](O::Optimizer& o, int t) {
          if (t == 1) O::exclude_from_weight_decay(o);
        });
  }
}

TEST_CASE("LARS trust ratio is 1 when a norm vanishes") {
  const Array zero = Array::zeros({3}, Dtype::float64), one = Array::ones({3}, Dtype::float64);
  CHECK(O::lars_rate(zero, one, 0.5, 0.1, 0, 0, false).item<double>() == 0.5);
  CHECK(O::lars_rate(one, zero, 0.5, 0.1, 0, 0, false).item<double>() == 0.5);
  CHECK(O::lars_rate(one, one, 0.5, 0.1, 0, 0, true).item<double>() == doctest::Approx(0.1));
}

TEST_CASE("LAMB: hand-computed step and the formula") {
  O::LAMB lamb({.lr = 0.1, .eps = 0});
  expect_params(*step_fixed(lamb), {1 - 0.158113883008419, -2.158113883008419}, {0.55}, 1e-12);
  const double lr = 0.02, b1 = 0.8, b2 = 0.95, eps = 1e-6, lambda = 0.05, lo = 0.1, hi = 1.5;
  O::LAMB reference({.lr = lr, .beta1 = b1, .beta2 = b2, .eps = eps, .weight_decay_rate = lambda,
                     .lower_bound = lo, .upper_bound = hi});
  check_against_reference(reference, [&](Vec& w, const Vec& g, State& s, int t, const std::string&) {
    Vec& m = zeros_like(s, "m", w);
    Vec& v = zeros_like(s, "v", w);
    Vec u(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      const double r = m[i] / (1 - std::pow(b1, t)) / (std::sqrt(v[i] / (1 - std::pow(b2, t))) + eps);
      u[i] = r + lambda * w[i];
    }
    const double ratio = std::min(std::max(norm(w), lo), hi) / norm(u);
    for (size_t i = 0; i < w.size(); ++i) w[i] -= lr * ratio * u[i];
  });
}

TEST_CASE("RMSpropWarmup: alpha curves, hand-computed step and the formula") {
  CHECK(O::warmup_alpha_sgd(10, 10, 5) == 0.5);
  CHECK(O::warmup_alpha_sgd(0, 10, 5) == doctest::Approx(0.5 * std::exp(-4.0)));
  CHECK(O::warmup_alpha_sgd(12, 10, 5) == doctest::Approx(0.9));
  CHECK(O::warmup_alpha_sgd(12.5, 10, 5) == 1.0);
  CHECK(O::warmup_alpha_sgd(40, 10, 5) == 1.0);

  O::RMSpropWarmup warmup({.lr = 0.1, .rms_decay = 0.9, .eps = 0, .lr_rms = 0.01});
  warmup.set_epoch_detail(10);
  CHECK(warmup.alpha_sgd() == 0.5);
  CHECK(warmup.alpha_rms() == doctest::Approx(0.05));
  expect_params(*step_fixed(warmup), {0.9591886116991581, -2.065811388300842}, {0.5658113883008419}, 1e-12);

  const double lr = 0.2, mu1 = 0.8, mu2 = 0.9, eps = 1e-6, lr_rms = 0.003, lambda = 0.01;
  O::RMSpropWarmup reference({.lr = lr, .momentum = mu1, .rms_decay = mu2, .eps = eps, .lr_rms = lr_rms,
                              .center = 1, .period = 2, .weight_decay_rate = lambda});
  auto epoch_at = [](int t) { return 0.4 * t; };
  check_against_reference(
      reference,
      [&](Vec& w, const Vec& g0, State& s, int t, const std::string&) {
        Vec& m = zeros_like(s, "m", w);
        Vec& d = zeros_like(s, "D", w);
        const double e = epoch_at(t);
        const double a_sgd = e < 1 ? 0.5 * std::exp(2 * (e - 1) / 2) : std::min(1.0, 0.5 + (e - 1) / 2);
        const double a_rms = (1 - a_sgd) * lr_rms / lr;
        for (size_t i = 0; i < w.size(); ++i) {
          const double g = g0[i] + lambda * w[i];
          m[i] = mu2 * m[i] + (1 - mu2) * g * g;
          d[i] = mu1 * d[i] - (a_sgd + a_rms / (std::sqrt(m[i]) + eps)) * g;
          w[i] += lr * d[i];
        }
      },
      8, [&](O::Optimizer& o, int t) { o.set_epoch_detail(epoch_at(t)); });
}

TEST_CASE("optimizer constructors reject bad hyperparameters") {
  expect_error<ValueError>([] { O::SGD(-1); }, {"lr >= 0", "-1"});
  expect_error<ValueError>([] { O::MomentumSGD(0.1, 1.0); }, {"MomentumSGD", "momentum in [0, 1)", "1"});
  expect_error<ValueError>([] { O::Adam({.beta2 = 1.5}); }, {"Adam", "beta2"});
  expect_error<ValueError>([] { O::LAMB({.lower_bound = 2, .upper_bound = 1}); }, {"lower_bound <= upper_bound"});
  expect_error<ValueError>([] { O::RMSpropWarmup({.period = 0}); }, {"period > 0"});
  expect_error<ValueError>([] { O::LARS({.eta = -1}); }, {"LARS", "eta"});
}

TEST_CASE("hyperparameters inherit from the optimizer until overridden per parameter") {
  O::MomentumSGD opt(0.1, 0.9);
  auto link = std::make_shared<TwoParams>();
  opt.setup(link);
  O::UpdateRule& rule = opt.update_rule("/b");
  CHECK(rule.hyperparam().get("lr") == 0.1);
  opt.set_lr(0.2);
  CHECK(rule.hyperparam().get("lr") == 0.2);
  rule.hyperparam().set("lr", 0);
  CHECK(rule.hyperparam().overrides("lr"));
  CHECK(opt.lr() == 0.2);
  CHECK(opt.update_rule("/W").hyperparam().get("lr") == 0.2);

  set_fixed_grads(*link);
  opt.update();
  expect_params(*link, {0.9, -2.2}, {0.5});

  rule.hyperparam().reset("lr");
  CHECK(rule.hyperparam().get("lr") == 0.2);
  CHECK(rule.hyperparam().names() ==
        std::vector<std::string>{"lr", "momentum", "momentum_correction", "weight_decay_rate"});
  expect_error<ValueError>([&] { rule.hyperparam().set("learning_rate", 1); },
                           {"unknown name 'learning_rate'", "lr, momentum"});
  expect_error<ValueError>([&] { rule.hyperparam().get("beta1"); }, {"'beta1'"});
  expect_error<ValueError>([&] { rule.hyperparam().reset("lr"); }, {"'lr'", "not an override"});
  expect_error<ValueError>([&] { opt.hyperparam().define("lr", 1); }, {"'lr' is already defined"});
  expect_error<ValueError>([&] { opt.update_rule("/c"); }, {"no parameter '/c'"});
}

TEST_CASE("weight_decay_rate can be switched off for one parameter") {
  O::SGD opt(0.1, 0.1);
  auto link = std::make_shared<TwoParams>();
  opt.setup(link);
  opt.update_rule("/b").hyperparam().set("weight_decay_rate", 0);
  set_fixed_grads(*link);
  opt.update();
  expect_params(*link, {0.94, -2.08}, {0.6});
}

TEST_CASE("hooks run in order: optimizer pre hooks, then each rule with its own hooks, then post hooks") {
  O::SGD opt(0.1);
  auto link = std::make_shared<TwoParams>();
  opt.setup(link);
  std::vector<std::string> order;
  auto record = [&](const std::string& label) {
    return [&order, label](O::Optimizer&, std::vector<O::GradientEntry>& entries) {
      order.push_back(label + ":" + std::to_string(entries.size()));
    };
  };
  opt.add_hook(record("first"), "first");
  opt.add_hook(record("second"), "second");
  opt.add_hook(record("after"), "after", O::HookTiming::post);
  opt.add_hook(record("removed"), "removed");
  opt.remove_hook("removed");
  for (const std::string path : {"/W", "/b"}) {
    O::UpdateRule& rule = opt.update_rule(path);
    rule.add_hook([&, path](O::UpdateRule& r, const Variable&, const Array&) {
      order.push_back(path + " pre t=" + std::to_string(r.t()) + " opt.t=" + std::to_string(opt.t()));
    }, "pre");
    rule.add_hook([&, path](O::UpdateRule&, const Variable& p, const Array&) {
      order.push_back(path + " post " + std::to_string(p.data().to_vector<double>()[0]));
    }, "post", O::HookTiming::post);
  }
  set_fixed_grads(*link);
  opt.update();
  CHECK(order == std::vector<std::string>{"first:2", "second:2", "/W pre t=1 opt.t=1", "/W post 0.950000",
                                          "/b pre t=1 opt.t=1", "/b post 0.600000", "after:2"});
  expect_error<ValueError>([&] { opt.add_hook(record("x"), "first"); }, {"'first' is already registered"});
  expect_error<ValueError>([&] { opt.remove_hook("nope"); }, {"no hook named 'nope'"});
  expect_error<ValueError>([&] { opt.update_rule("/W").remove_hook("nope"); }, {"UpdateRule", "'nope'"});
}

TEST_CASE("update() skips parameters without a gradient and disabled rules; counts steps and epochs") {
  O::SGD opt(0.1);
  auto link = std::make_shared<TwoParams>();
  expect_error<ValueError>([&] { opt.update(); }, {"setup"});
  opt.setup(link);
  link->param("W").set_grad(Array::from_vector<double>({0.5, 1}, {2}));
  opt.update();
  CHECK(opt.update_rule("/W").t() == 1);
  CHECK(opt.update_rule("/b").t() == 0);
  expect_params(*link, {0.95, -2.1}, {0.5});
  opt.update_rule("/W").set_enabled(false);
  opt.update();
  CHECK(opt.t() == 2);
  CHECK(opt.update_rule("/W").t() == 1);
  expect_params(*link, {0.95, -2.1}, {0.5});
  CHECK(opt.epoch() == 0);
  opt.new_epoch();
  CHECK(opt.epoch() == 1);
}

TEST_CASE("update(lossfun) clears gradients before each backward") {
  O::SGD with_lossfun(0.1), by_hand(0.1);
  auto a = std::make_shared<TwoParams>(), b = std::make_shared<TwoParams>();
  with_lossfun.setup(a);
  by_hand.setup(b);
  for (int i = 0; i < 3; ++i) {
    with_lossfun.update([&] { return quadratic_loss(*a); });
    b->cleargrads();
    quadratic_loss(*b).backward();
    by_hand.update();
  }
  expect_close(a->param("W").data(), b->param("W").data(), 0, 0);
  expect_close(a->param("b").data(), b->param("b").data(), 0, 0);
}

TEST_CASE("rules are created for parameters initialised after setup") {
  auto link = std::make_shared<L::Link>();
  link->add_uninitialized_param("W", [](const Array& a) { a.fill(1.0); }, Dtype::float64);
  O::Adam opt;
  opt.setup(link);
  CHECK(opt.update_rules().size() == 1);
  link->initialize_param("W", {2});
  link->add_param("late", Array::ones({1}, Dtype::float64));
  link->param("W").set_grad(Array::ones({2}, Dtype::float64));
  link->param("late").set_grad(Array::ones({1}, Dtype::float64));
  opt.update();
  CHECK(opt.update_rule("/late").t() == 1);
  CHECK(opt.update_rule("/W").states().at("m").shape() == Shape{2});
  expect_values(link->param("late").data(), {1 - 1e-3}, 1e-9);
}

TEST_CASE("parameters and children added or replaced between updates are picked up by the next one") {
  auto net = std::make_shared<L::Chain>();
  net->add_link("first", std::make_shared<TwoParams>());
  O::SGD opt(0.5);
  opt.setup(net);
  set_fixed_grads(*net->child<TwoParams>("first"));
  opt.update();
  expect_params(*net->child<TwoParams>("first"), {0.75, -2.5}, {1.0});

  net->add_link("second", std::make_shared<TwoParams>());
  for (const char* name : {"first", "second"}) set_fixed_grads(*net->child<TwoParams>(name));
  opt.update();
  expect_params(*net->child<TwoParams>("first"), {0.5, -3}, {1.5});
  expect_params(*net->child<TwoParams>("second"), {0.75, -2.5}, {1.0});

  auto replacement = std::make_shared<TwoParams>();
  net->replace_child("second", replacement);
  set_fixed_grads(*replacement);
  opt.update();
  expect_params(*replacement, {0.75, -2.5}, {1.0});
  CHECK(opt.update_rules().size() == 4);
}

TEST_CASE("exclude_from_weight_decay marks biases and normalisation parameters, or any 1-D one") {
  auto net = std::make_shared<L::Chain>();
  auto linear = std::make_shared<L::Link>();
  linear->add_param("W", Array::ones({2, 2}));
  linear->add_param("b", Array::ones({2}));
  auto bn = std::make_shared<L::Link>();
  bn->add_param("gamma", Array::ones({2}));
  bn->add_param("beta", Array::zeros({2}));
  auto scale = std::make_shared<L::Link>();
  scale->add_param("s", Array::ones({2}));
  net->add_link("bn", bn);
  net->add_link("fc", linear);
  net->add_link("scale", scale);
  O::MomentumSGD opt(0.1, 0.9, 1e-4);
  expect_error<ValueError>([&] { O::exclude_from_weight_decay(opt); }, {"setup"});
  opt.setup(net);
  CHECK(O::exclude_from_weight_decay(opt) == 3);
  for (const std::string path : {"/bn/beta", "/bn/gamma", "/fc/b"}) {
    O::UpdateRule& rule = opt.update_rule(path);
    CHECK(rule.weight_decay_exempt());
    CHECK(rule.lars_skip());
    CHECK(rule.hyperparam().get("weight_decay_rate") == 0);
  }
  CHECK_FALSE(opt.update_rule("/scale/s").weight_decay_exempt());
  CHECK(opt.update_rule("/fc/W").hyperparam().get("weight_decay_rate") == 1e-4);
  CHECK(O::exclude_from_weight_decay(opt, O::is_one_dimensional) == 4);
  CHECK(opt.update_rule("/scale/s").lars_skip());
  CHECK_FALSE(opt.update_rule("/fc/W").lars_skip());
}

TEST_CASE("WeightDecay and Lasso hooks respect the exemption") {
  O::SGD opt(0.1);
  auto link = std::make_shared<TwoParams>();
  opt.setup(link);
  opt.add_hook(O::WeightDecay(0.1), "decay");
  set_fixed_grads(*link);
  opt.update();
  expect_params(*link, {0.94, -2.08}, {0.595});

  O::SGD lasso(0.1);
  auto other = std::make_shared<TwoParams>();
  lasso.setup(other);
  lasso.add_hook(O::Lasso(0.1), "lasso");
  O::exclude_from_weight_decay(lasso);
  set_fixed_grads(*other);
  lasso.update();
  expect_params(*other, {0.94, -2.09}, {0.6});
  expect_error<ValueError>([] { O::WeightDecay(-1); }, {"WeightDecay", "rate >= 0"});
  expect_error<ValueError>([] { O::WeightDecay{INFINITY}; }, {"WeightDecay", "finite rate", "got inf"});
}

TEST_CASE("GradientClipping rescales by the global norm; GradientHardClipping clamps") {
  for (const auto& [threshold, w, b] : std::vector<std::tuple<double, Vec, Vec>>{
           {0.75, {0.975, -2.05}, {0.55}}, {10, {0.95, -2.1}, {0.6}}}) {
    O::SGD opt(0.1);
    opt.add_hook(O::GradientClipping(threshold), "clip");
    expect_params(*step_fixed(opt), w, b);
  }
  O::SGD hard(0.1);
  hard.add_hook(O::GradientHardClipping(-0.6, 0.6), "hard");
  expect_params(*step_fixed(hard), {0.95, -2.06}, {0.56});
  expect_error<ValueError>([] { O::GradientClipping(0); }, {"threshold > 0"});
  expect_error<ValueError>([] { O::GradientHardClipping(1, -1); }, {"lower <= upper", "1", "-1"});
}

TEST_CASE("GradientLARS turns SGD into LARS and leaves skipped parameters alone") {
  O::SGD opt(1);
  opt.add_hook(O::GradientLARS(0.1, 0, 0), "lars");
  expect_params(*step_fixed(opt), {0.9, -2.2}, {0.55});
  O::SGD skipping(1);
  skipping.add_hook(O::GradientLARS(0.1, 0, 0), "lars");
  auto link = std::make_shared<TwoParams>();
  skipping.setup(link);
  O::exclude_from_weight_decay(skipping);
  set_fixed_grads(*link);
  skipping.update();
  expect_params(*link, {0.9, -2.2}, {1.5});
}

TEST_CASE("serialize round trip: resuming from a checkpoint matches running on") {
  auto make = [] {
    return std::make_unique<O::Adam>(O::AdamOptions{.lr = 0.05, .weight_decay_rate = 0.01, .amsgrad = true});
  };
  auto running = make();
  auto link = std::make_shared<TwoParams>();
  running->setup(link);
  running->set_loss_scaler(O::LossScaler::dynamic({.initial_scale = 8, .growth_interval = 2}));
  for (int i = 0; i < 3; ++i) running->update([&] { return quadratic_loss(*link); });
  running->new_epoch();
  CHECK(running->loss_scale() == 16);

  auto store = std::make_shared<MemorySerializer::Store>();
  MemorySerializer writer(false, store);
  running->serialize(writer);
  link->serialize(writer["model"]);
  CHECK(store->integers.at("t") == 3);
  CHECK(store->integers.at("epoch") == 1);
  CHECK(store->integers.at("W/t") == 3);
  CHECK(store->arrays.contains("b/v_max"));
  CHECK_FALSE(store->arrays.at("b/master").defined());  // absent states are saved undefined
  CHECK(store->doubles.at("loss_scale") == 16);

  auto resumed = make();
  auto resumed_link = std::make_shared<TwoParams>();
  resumed->setup(resumed_link);
  resumed->set_loss_scaler(O::LossScaler::dynamic({.initial_scale = 8, .growth_interval = 2}));
  MemorySerializer reader(true, store);
  resumed->serialize(reader);
  resumed_link->serialize(reader["model"]);
  CHECK(resumed->t() == 3);
  CHECK(resumed->epoch() == 1);
  CHECK(resumed->update_rule("/W").t() == 3);
  CHECK(resumed->loss_scale() == 16);
  CHECK(resumed->loss_scaler()->clean_steps() == 1);
  for (int i = 0; i < 2; ++i) {
    running->update([&] { return quadratic_loss(*link); });
    resumed->update([&] { return quadratic_loss(*resumed_link); });
  }
  expect_close(resumed_link->param("W").data(), link->param("W").data(), 0, 0);
  expect_close(resumed_link->param("b").data(), link->param("b").data(), 0, 0);
}

TEST_CASE("a strict load_npz restores an optimizer into fresh rules and drops states the file lacks") {
  TempDir dir;
  O::Adam running(O::AdamOptions{.lr = 0.05});
  step_fixed(running, 2);
  serializers::save_npz(dir / "adam.npz", running);
  O::Adam resumed(O::AdamOptions{.lr = 0.05});
  auto resumed_link = std::make_shared<TwoParams>();
  resumed.setup(resumed_link);
  serializers::load_npz(dir / "adam.npz", resumed);  // v_max and master are stored as absent
  CHECK(resumed.update_rule("/W").t() == 2);
  CHECK(resumed.update_rule("/W").states().size() == 2);
  expect_close(resumed.update_rule("/W").states().at("m"), running.update_rule("/W").states().at("m"), 0, 0);
  // Loading the state of a fresh optimizer removes the states this one had.
  O::Adam fresh(O::AdamOptions{.lr = 0.05});
  fresh.setup(std::make_shared<TwoParams>());
  serializers::save_npz(dir / "fresh.npz", fresh);
  serializers::load_npz(dir / "fresh.npz", resumed);
  CHECK(resumed.update_rule("/W").states().empty());
  CHECK(resumed.update_rule("/W").t() == 0);
}

TEST_CASE("a checkpoint saved on the CPU resumes on another device: loaded states follow their parameters") {
  TempDir dir;
  // The suite's device where it is not the CPU (the loopback device cannot reach another one's arrays).
  const Device device = default_device() == Device::cpu() ? Device::loopback(0) : default_device();
  for (const Dtype dtype : {Dtype::float64, Dtype::float16}) {  // float16 with float32 masters
    INFO(dtype_name(dtype));
    auto make = [dtype](const Device& on) {
      auto link = std::make_shared<TwoParams>();
      for (auto& [path, param] : link->namedparams()) param.set_data(param.data().astype(dtype).to(on));
      auto optimizer = std::make_shared<O::MomentumSGD>(0.1, 0.9);
      optimizer->setup(link);
      if (dtype != Dtype::float64) optimizer->use_fp32_update();
      return std::pair{link, optimizer};
    };
    const auto step = [](const std::pair<std::shared_ptr<TwoParams>, std::shared_ptr<O::MomentumSGD>>& run) {
      const Device on = run.first->param("W").data().device();
      run.first->param("W").set_grad(Array::from_vector<double>({0.5, 1}, {2}, run.first->param("W").dtype(), on));
      run.first->param("b").set_grad(Array::from_vector<double>({-1}, {1}, run.first->param("b").dtype(), on));
      CHECK(run.second->update());
    };
    const auto on_cpu = make(Device::cpu());
    for (int i = 0; i < 2; ++i) step(on_cpu);
    serializers::save_npz(dir / "cpu.npz", *on_cpu.second);
    serializers::save_npz(dir / "cpu_model.npz", *on_cpu.first);
    const auto resumed = make(device);
    serializers::load_npz(dir / "cpu.npz", *resumed.second);
    serializers::load_npz(dir / "cpu_model.npz", *resumed.first);
    step(on_cpu);
    step(resumed);
    for (const auto& entry : resumed.second->update_rule("/W").states()) {
      const std::string& name = entry.first;  // (clang 14 captures no structured binding in INFO)
      INFO(name);
      CHECK(entry.second.device() == device);
    }
    expect_close(resumed.first->param("W").data().to(Device::cpu()), on_cpu.first->param("W").data(), 0, 0);
    expect_close(resumed.first->param("b").data().to(Device::cpu()), on_cpu.first->param("b").data(), 0, 0);
  }
}

TEST_CASE("parameters that received one shared gradient array are updated independently") {
  auto link = std::make_shared<L::Link>();
  link->add_param("a", Array::from_vector<double>({1, 2}, {2}));
  link->add_param("c", Array::from_vector<double>({3, 4}, {2}));
  O::SGD opt(0.1);
  opt.setup(link);
  opt.add_hook(O::WeightDecay(0.5), "decay");
  opt.set_loss_scaler(O::LossScaler::fixed(4));
  opt.update([&] { return F::sum_to(link->param("a") + link->param("c"), Shape{}); });
  expect_values(link->param("a").data(), {0.85, 1.8});
  expect_values(link->param("c").data(), {2.75, 3.7});
  expect_values(link->param("a").grad(), {1.5, 2});
  expect_values(link->param("c").grad(), {2.5, 3});
}

namespace {

// A net of four parameters of three shapes: two weights and two biases.
std::shared_ptr<L::Chain> four_params(Dtype dtype) {
  auto net = std::make_shared<L::Chain>();
  for (const char* name : {"a", "b"}) {
    auto layer = std::make_shared<L::Link>();
    layer->add_param("W", Array::uniform({3, 4}, -1, 1, name[0], dtype));
    layer->add_param("bias", Array::uniform({3}, -1, 1, name[0] + 7, dtype));
    net->add_link(name, layer);
  }
  return net;
}

// The net's parameters after three updates by `optimizer` from fixed gradients (a different one each
// step), every rule given a hook (which keeps it out of any group) when `alone`.
std::vector<std::vector<double>> after_three_steps(O::Optimizer& optimizer, Dtype dtype, bool alone,
                                                   bool fp32_update) {
  auto net = four_params(dtype);
  optimizer.setup(net);
  if (fp32_update) optimizer.use_fp32_update();
  O::exclude_from_weight_decay(optimizer);
  optimizer.update_rule("/b/W").hyperparam().set("lr", 0.03);
  if (alone) {
    for (auto& [path, rule] : optimizer.update_rules()) {
      rule->add_hook([](O::UpdateRule&, const Variable&, const Array&) {}, "keeps it alone");
    }
  }
  for (int step = 0; step < 3; ++step) {
    optimizer.hyperparam().set("lr", 0.1 / (step + 1));
    for (auto& [path, param] : net->namedparams()) {
      param.set_grad(Array::uniform(param.shape(), -1, 1, static_cast<uint64_t>(step * 31 + path.size()), dtype));
    }
    CHECK(optimizer.update());
  }
  std::vector<std::vector<double>> values;
  for (auto& [path, param] : net->namedparams()) values.push_back(param.data().to_vector<double>());
  return values;
}

}  // namespace

TEST_CASE("a group's update equals each parameter's own to the bit: MomentumSGD and LARS, overrides, master copies") {
  for (const Dtype dtype : {Dtype::float32, Dtype::float16}) {
    for (const bool fp32_update : {false, true}) {
      CAPTURE(dtype);
      CAPTURE(fp32_update);
      const auto sgd = [] {
        auto o = std::make_unique<O::MomentumSGD>(0.1, 0.9, 1e-3);
        o->hyperparam().set("momentum_correction", 1);
        return o;
      };
      CHECK(after_three_steps(*sgd(), dtype, false, fp32_update) == after_three_steps(*sgd(), dtype, true, fp32_update));
      for (const bool clip : {false, true}) {
        CAPTURE(clip);
        const auto lars = [clip] {
          return std::make_unique<O::LARS>(O::LARSOptions{.lr = 0.1, .eta = 0.02, .weight_decay_rate = 1e-3, .clip = clip});
        };
        CHECK(after_three_steps(*lars(), dtype, false, fp32_update) ==
              after_three_steps(*lars(), dtype, true, fp32_update));
      }
    }
  }
}

TEST_CASE("update_together refuses a rule that cannot join a group, naming its parameter") {
  O::MomentumSGD opt(0.1, 0.9);
  auto link = std::make_shared<TwoParams>();
  opt.setup(link);
  set_fixed_grads(*link);
  O::UpdateRule* w = &opt.update_rule("/W");
  O::UpdateRule* b = &opt.update_rule("/b");
  b->add_hook([](O::UpdateRule&, const Variable&, const Array&) {}, "own hook");
  expect_error<ValueError>(
      [&] {
        O::UpdateRule::update_together({w, b}, {link->param("W"), link->param("b")},
                                       {link->param("W").grad(), link->param("b").grad()});
      },
      {"update_together", "rule 1", "parameter 'b'"});
}

TEST_CASE("momentum_steps and squared_norms: each tensor as its own routines compute it; mismatches refused") {
  const Array w1 = Array::uniform({5}, -1, 1, 1), w2 = Array::uniform({2, 3}, -1, 1, 2);
  const Array g1 = Array::uniform({5}, -1, 1, 3), g2 = Array::uniform({2, 3}, -1, 1, 4);
  // More elements than a GPU block takes (several chunks of one tensor).
  const Array big = Array::uniform({140000}, -1, 1, 5), big_g = Array::uniform({140000}, -1, 1, 6);
  const Array norms = ops::squared_norms({w1, w2, g1, big});
  CHECK(norms.dtype() == Dtype::float32);
  CHECK(norms.get_item({1}).item<double>() == doctest::Approx(ops::sum(ops::square(w2)).item<double>()).epsilon(1e-6));
  CHECK(norms.get_item({3}).item<double>() == doctest::Approx(ops::sum(ops::square(big)).item<double>()).epsilon(1e-5));
  CHECK(ops::squared_norms({w1.astype(Dtype::float64)}).dtype() == Dtype::float64);
  CHECK(ops::squared_norms({}).shape() == Shape{0});
  // The step form (Chainer's MomentumSGD) and the descent form (LARS), against their formulas.
  for (const VelocityForm form : {VelocityForm::step, VelocityForm::descent}) {
    const Array a = w1.copy(), b = w2.copy(), c = big.copy(), va = Array::full({5}, 0.5), vb = Array::zeros({2, 3});
    const Array vc = Array::full({140000}, 0.5);
    MomentumTensors t{{a, b, c}, {va, vb, vc}, {g1, g2, big_g}, {0.9, 0.5, 0.9}, {0.01, 0, 0.01},
                      Array::from_vector<double>({0.1, 0.2, 0.1}, {3}), form};
    ops::momentum_steps(t);
    const double sign = form == VelocityForm::step ? -1 : 1;
    for (const auto& [before, grad, after] : {std::tuple{w1, g1, a}, std::tuple{big, big_g, c}}) {
      const std::vector<double> w = before.to_vector<double>(), g = grad.to_vector<double>();
      const std::vector<double> got = after.to_vector<double>();
      bool close = true;
      for (size_t i = 0; i < w.size(); ++i) {
        const double v = 0.9 * 0.5 + sign * 0.1 * (g[i] + 0.01 * w[i]);
        close = close && std::fabs(got[i] - (w[i] - sign * v)) <= 1e-6;
      }
      CHECK(close);
    }
  }
  const Array rate = Array::from_vector<double>({0.1}, {1});
  // Strided parameters (a GPU's kernel updates them tensor by tensor, the rates read on the host).
  const Array wide = Array::uniform({10}, -1, 1, 7), wide_g = Array::uniform({10}, -1, 1, 8);
  const Array strided = wide.get_item({Slice{0, 10, 2}}), strided_g = wide_g.get_item({Slice{0, 10, 2}});
  const std::vector<double> w_before = strided.to_vector<double>(), g_before = strided_g.to_vector<double>();
  ops::momentum_steps({{strided}, {Array::zeros({10}).get_item({Slice{0, 10, 2}})}, {strided_g}, {0.9}, {0}, rate});
  const std::vector<double> w_after = strided.to_vector<double>();
  for (size_t i = 0; i < w_after.size(); ++i) CHECK(w_after[i] == doctest::Approx(w_before[i] - 0.1 * g_before[i]));
  expect_error<ShapeError>([&] { ops::momentum_steps({{w1}, {w1.copy()}, {g1, g2}, {0.9}, {0}, rate}); },
                           {"momentum_steps", "1 velocities", "got 1, 2"});
  expect_error<ShapeError>([&] { ops::momentum_steps({{w1}, {w2.copy()}, {g1}, {0.9}, {0}, rate}); },
                           {"momentum_steps", "parameter 0", "(5,)", "(2, 3)"});
  expect_error<ShapeError>([&] { ops::momentum_steps({{w1}, {w1.copy()}, {g1}, {0.9}, {0}, rate.astype(Dtype::float32)}); },
                           {"momentum_steps", "float64 rates", "float32"});
  expect_error<DtypeError>([&] { ops::squared_norms({w1, w2.astype(Dtype::float64)}); },
                           {"squared_norms", "one floating dtype", "float64", "array 1"});
  expect_error<DtypeError>([&] { ops::squared_norms({w1.astype(Dtype::int32)}); }, {"squared_norms", "int32"});
}

TEST_CASE("all_finite: one call over arrays of every floating dtype finds one infinity or NaN anywhere") {
  const std::vector<Dtype> floating = {Dtype::float64, Dtype::float32, Dtype::float16, Dtype::bfloat16};
  const double largest[] = {std::numeric_limits<double>::max(), std::numeric_limits<float>::max(), 65504.0,
                            3.3895313892515355e38};
  const double bad[] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                        std::numeric_limits<double>::quiet_NaN()};
  std::vector<Array> arrays;  // per dtype: several GPU chunks of finite edges, and a strided view
  for (size_t d = 0; d < floating.size(); ++d) {
    const Array big = Array::uniform({140000}, -3, 3, 50 + d, floating[d]);
    big.get_item({Slice{0, 4}}).assign(
        Array::from_vector<double>({largest[d], -largest[d], 1e-40, -0.0}, {4}).astype(floating[d]));
    arrays.push_back(big);
    arrays.push_back(Array::uniform({4, 6}, -2, 2, 60 + d, floating[d]).get_item({Slice{}, Slice{0, 6, 2}}));
  }
  arrays.push_back(Array::full({3}, 7.0, Dtype::int32));  // integers are finite
  CHECK(ops::all_finite(arrays).dtype() == Dtype::bool_);
  CHECK(ops::all_finite(arrays).shape() == Shape{});
  CHECK(ops::all_finite(arrays).item<bool>());
  CHECK(ops::all_finite({}).item<bool>());
  for (size_t k = 0; k + 1 < arrays.size(); ++k) {
    for (const double value : bad) {
      const Array& a = arrays[k];
      // The first element, the last, and one in the middle of the array's last chunk.
      for (const int64_t at : {int64_t{0}, a.size() - 1, a.size() - 1 - a.size() % 65536 / 2}) {
        CAPTURE(k);
        CAPTURE(value);
        CAPTURE(at);
        std::vector<Array> changed = arrays;
        changed[k] = a.copy();
        changed[k].reshape({a.size()}).get_item({at}).assign(Array::scalar(value).astype(a.dtype()));
        CHECK_FALSE(ops::all_finite(changed).item<bool>());
      }
    }
  }
  // A strided view: a non-finite element between its elements is not the view's, one of them is.
  const Array base = Array::zeros({4, 6});
  const Array inf = Array::scalar(std::numeric_limits<double>::infinity()).astype(Dtype::float32);
  base.get_item({0, 1}).assign(inf);
  CHECK(ops::all_finite({base.get_item({Slice{}, Slice{0, 6, 2}})}).item<bool>());
  CHECK_FALSE(ops::all_finite({base}).item<bool>());
  base.get_item({3, 4}).assign(inf);
  CHECK_FALSE(ops::all_finite({base.get_item({Slice{}, Slice{0, 6, 2}})}).item<bool>());
  // A dense view that starts inside its array: an infinity just before it is not the view's.
  const Array row = Array::zeros({40});
  row.get_item({9}).assign(inf);
  CHECK(ops::all_finite({row.get_item({Slice{10, 20}})}).item<bool>());
  row.get_item({15}).assign(inf);
  CHECK_FALSE(ops::all_finite({row.get_item({Slice{10, 20}})}).item<bool>());
  expect_error<ValueError>([&] { ops::all_finite({Array::zeros({2}, Dtype::int32), Array()}); },
                           {"all_finite", "array 1", "undefined"});
}

TEST_CASE("copy_tensors converts (and divides) every pair as astype (and /) do, in one call for any mix of dtypes") {
  const std::vector<Dtype> floating = {Dtype::float64, Dtype::float32, Dtype::float16, Dtype::bfloat16};
  std::vector<Array> sources, destinations, expected;
  uint64_t seed = 40;
  for (const Dtype from : floating) {
    for (const Dtype to : floating) {
      // A tensor of several GPU chunks, a small one with values past float16's range and below its
      // normals, and a strided view.
      const Array big = Array::uniform({140000}, -3, 3, ++seed, from);
      const Array edges = Array::from_vector<double>({70000.0, -1e-8, 65519.0, -0.0, 1.0 / 3, 1e30}, {6}).astype(from);
      const Array strided = Array::uniform({4, 6}, -2, 2, ++seed, from).get_item({Slice{}, Slice{0, 6, 2}});
      for (const Array& source : {big, edges, strided}) {
        sources.push_back(source);
        destinations.push_back(Array::empty(source.shape(), to));
        expected.push_back(source.astype(to));
      }
    }
  }
  ops::copy_tensors(sources, destinations);
  for (size_t k = 0; k < sources.size(); ++k) {
    CAPTURE(k);
    CHECK(destinations[k].dtype() == expected[k].dtype());
    CHECK(destinations[k].to_vector<double>() == expected[k].to_vector<double>());
  }
  // Divided on the way (a loss scale's unscaling) as `destination / divisor` divides, to the bit: a power
  // of two (exact but where the quotient is subnormal; infinite as a float16, so that inf / inf gives
  // NaN there) and a divisor no dtype holds exactly.
  const auto same = [](const Array& a, const Array& b) {
    const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] != y[i] && !(std::isnan(x[i]) && std::isnan(y[i]))) return false;
    }
    return true;
  };
  for (const double divisor : {65536.0, 0.3}) {
    CAPTURE(divisor);
    ops::copy_tensors(sources, destinations, divisor);
    for (size_t k = 0; k < sources.size(); ++k) {
      CAPTURE(k);
      CHECK(same(destinations[k], expected[k] / divisor));
    }
  }
  ops::copy_tensors({}, {});
  const Array a = Array::zeros({3}), b = Array::zeros({4});
  expect_error<ShapeError>([&] { ops::copy_tensors({a}, {}); },
                           {"copy_tensors", "as many destinations", "(1)", "got 0"});
  expect_error<ShapeError>([&] { ops::copy_tensors({a, a}, {a.copy(), b}); },
                           {"copy_tensors", "pair 1", "(3,)", "(4,)"});
  expect_error<DtypeError>([&] { ops::copy_tensors({a}, {a.astype(Dtype::int32)}); },
                           {"copy_tensors", "int32", "pair 0"});
  expect_error<ValueError>([&] { ops::copy_tensors({a}, {Array()}); }, {"copy_tensors", "pair 0", "undefined"});
  expect_error<ValueError>([&] { ops::copy_tensors({a}, {a.copy()}, 0); }, {"copy_tensors", "non-zero divisor", "got 0"});
  expect_error<ValueError>([&] { ops::copy_tensors({a}, {a.copy()}, std::nan("")); }, {"copy_tensors", "got nan"});
}

TEST_CASE("add_scaled_tensors adds each source times a factor as add_to(target, astype * factor) does, to the bit") {
  const std::vector<Dtype> floating = {Dtype::float64, Dtype::float32, Dtype::float16, Dtype::bfloat16};
  std::vector<Array> sources, targets, expected;
  uint64_t seed = 60;
  for (const Dtype from : floating) {
    for (const Dtype to : floating) {
      // Several GPU chunks, and a strided view (added one by one on a GPU).
      const Array big = Array::uniform({140000}, -3, 3, ++seed, from);
      const Array strided = Array::uniform({4, 6}, -2, 2, ++seed, from).get_item({Slice{}, Slice{0, 6, 2}});
      for (const Array& source : {big, strided}) {
        const Array target = Array::uniform(source.shape(), -1, 1, ++seed, to);
        sources.push_back(source);
        targets.push_back(target);
        expected.push_back(target.copy());
        ops::add_to(expected.back(), source.astype(to) * 1e-4);
      }
    }
  }
  ops::add_scaled_tensors(sources, targets, 1e-4);
  for (size_t k = 0; k < sources.size(); ++k) {
    CAPTURE(k);
    CHECK(targets[k].to_vector<double>() == expected[k].to_vector<double>());
  }
  const Array a = Array::zeros({3});
  expect_error<ValueError>([&] { ops::add_scaled_tensors({a}, {a.copy()}, INFINITY); },
                           {"add_scaled_tensors", "finite factor", "got inf"});
  expect_error<ShapeError>([&] { ops::add_scaled_tensors({a}, {Array::zeros({4})}, 1); },
                           {"add_scaled_tensors", "pair 0", "(3,)", "(4,)"});
}

TEST_CASE("copy_tensors takes pairs of several devices; astype_together converts only what it must") {
  const Array host = Array::uniform({5}, -1, 1, 50, Dtype::float32, Device::cpu());
  const Array device = Array::uniform({7}, -1, 1, 51, Dtype::float16);  // the suite's device
  const Array host_to = Array::empty({5}, Dtype::float16, Device::cpu()), device_to = Array::empty({7}, Dtype::float32);
  ops::copy_tensors({host, device}, {host_to, device_to}, 4);
  CHECK(host_to.to_vector<double>() == (host.astype(Dtype::float16) / 4).to_vector<double>());
  CHECK(device_to.to_vector<double>() == (device.astype(Dtype::float32) / 4).to_vector<double>());
  expect_error<DeviceError>([&] { ops::copy_tensors({host}, {Array::empty({5}, Dtype::float32, Device::parse("loopback:1"))}); },
                            {"copy_tensors"});

  const Array same = Array::uniform({3}, -1, 1, 52, Dtype::float32);
  const std::vector<Array> out = ops::astype_together({same, device, Array()}, {Dtype::float32, Dtype::bfloat16, Dtype::float16});
  CHECK(out[0].storage() == same.storage());  // already float32: no copy
  CHECK(out[1].dtype() == Dtype::bfloat16);
  CHECK(out[1].to_vector<double>() == device.astype(Dtype::bfloat16).to_vector<double>());
  CHECK_FALSE(out[2].defined());
  expect_error<ShapeError>([&] { ops::astype_together({same}, {}); }, {"astype_together", "1 arrays", "got 0"});
  expect_error<DtypeError>([&] { ops::astype_together({same}, {Dtype::int32}); },
                           {"astype_together", "expected floating arrays", "float32 to int32"});
}
