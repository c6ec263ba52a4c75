// Ghost batch normalization: functions::ghost_batch_normalization against batch_normalization of each
// group (values, gradients, residual, ReLU, dtypes, channels-last), its errors, and the
// BatchNormalization link's group_size option (running averages and last-batch statistics).

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

// batch_normalization of each group of `group_size` examples, concatenated along axis 0.
Variable per_group_reference(const Variable& x, const Variable& gamma, const Variable& beta, int64_t group_size,
                             F::Activation activation = F::Activation::none, const Variable& residual = Variable()) {
  std::vector<Variable> parts;
  for (int64_t begin = 0; begin < x.shape()[0]; begin += group_size) {
    const std::vector<Index> rows{Slice{begin, begin + group_size}};
    const Variable r = residual.defined() ? F::get_item(residual, rows) : Variable();
    parts.push_back(F::batch_normalization(F::get_item(x, rows), gamma, beta, 1e-5, activation, r).y);
  }
  return F::concat(parts, 0);
}

// ghost_batch_normalization's output as a gradient_check::Function of (x, gamma, beta[, residual]).
gradient_check::Function ghost(int64_t group_size, F::Activation activation = F::Activation::none) {
  return [group_size, activation](const std::vector<Variable>& v) {
    const Variable residual = v.size() > 3 ? v[3] : Variable();
    return std::vector<Variable>{F::ghost_batch_normalization(v[0], v[1], v[2], group_size, 1e-5, activation,
                                                              residual).y};
  };
}

// The gradients of every input of f for the output gradient gy (inputs wrapped fresh).
std::vector<Array> gradients(const gradient_check::Function& f, const std::vector<Array>& inputs, const Array& gy) {
  std::vector<Variable> xs;
  for (const Array& a : inputs) xs.emplace_back(a.copy());
  Variable y = f(xs)[0];
  y.set_grad(gy);
  y.backward();
  std::vector<Array> out;
  for (const Variable& x : xs) out.push_back(x.grad());
  return out;
}

// x in channels-last memory.
Array channels_last(const Array& a) { return in_order(a, MemoryOrder::channels_last); }

}  // namespace

TEST_CASE("ghost_batch_normalization equals batch_normalization of each group, values and gradients") {
  const Array x = random({6, 3, 2, 2}, 1, Dtype::float64, -2, 3), gamma = random({3}, 2, Dtype::float64, 0.5, 1.5),
              beta = random({3}, 3), residual = random({6, 3, 2, 2}, 4), gy = random({6, 3, 2, 2}, 5);
  for (const F::Activation activation : {F::Activation::none, F::Activation::relu}) {
    for (const bool with_residual : {false, true}) {
      INFO("relu ", activation == F::Activation::relu, ", residual ", with_residual);
      std::vector<Array> inputs{x, gamma, beta};
      if (with_residual) inputs.push_back(residual);
      const gradient_check::Function reference = [activation](const std::vector<Variable>& v) {
        return std::vector<Variable>{per_group_reference(v[0], v[1], v[2], 2, activation,
                                                         v.size() > 3 ? v[3] : Variable())};
      };
      std::vector<Variable> wrapped;
      for (const Array& a : inputs) wrapped.emplace_back(a, false);
      expect_close(ghost(2, activation)(wrapped)[0].data(), reference(wrapped)[0].data(), 1e-12, 1e-10);
      const std::vector<Array> fused = gradients(ghost(2, activation), inputs, gy);
      const std::vector<Array> expected = gradients(reference, inputs, gy);
      for (size_t i = 0; i < inputs.size(); ++i) {
        INFO("input ", i);
        expect_close(fused[i], expected[i], 1e-11, 1e-9);
      }
      // The same through channels-last memory.
      std::vector<Array> last = inputs;
      last[0] = channels_last(x);
      if (with_residual) last[3] = channels_last(residual);
      const std::vector<Array> from_last = gradients(ghost(2, activation), last, channels_last(gy));
      for (size_t i = 0; i < inputs.size(); ++i) expect_close(from_last[i], expected[i], 1e-11, 1e-9);
    }
  }
}

TEST_CASE("ghost_batch_normalization statistics are the whole batch's E[x] and biased Var[x]") {
  const Array x = random({8, 2, 3}, 11, Dtype::float64, -1, 4);
  const auto result = F::ghost_batch_normalization(Variable(x), Variable(Array::ones({2}, Dtype::float64)),
                                                   Variable(Array::zeros({2}, Dtype::float64)), 2);
  const auto whole = F::batch_normalization(Variable(x), Variable(Array::ones({2}, Dtype::float64)),
                                            Variable(Array::zeros({2}, Dtype::float64)));
  CHECK(result.count == 24);
  CHECK(result.group_count == 6);
  CHECK(result.group_mean.shape() == Shape{4, 2});
  expect_close(result.mean, whole.mean, 1e-12, 1e-12);
  expect_close(result.var, whole.var, 1e-12, 1e-12);
  const Array second = x.get_item({Slice{2, 4}});
  const auto group1 = F::batch_normalization(Variable(second), Variable(Array::ones({2}, Dtype::float64)),
                                             Variable(Array::zeros({2}, Dtype::float64)));
  expect_close(result.group_mean.get_item({int64_t{1}}), group1.mean, 1e-12, 1e-12);
  expect_close(result.group_var.get_item({int64_t{1}}), group1.var, 1e-12, 1e-12);
}

TEST_CASE("ghost_batch_normalization with N <= group size is batch_normalization") {
  const Array x = random({3, 2, 2}, 21), gamma = random({2}, 22, Dtype::float64, 0.5, 1.5), beta = random({2}, 23);
  for (const int64_t group_size : {3, 8}) {
    const auto ghosted = F::ghost_batch_normalization(Variable(x), Variable(gamma), Variable(beta), group_size, 1e-5);
    const auto plain = F::batch_normalization(Variable(x), Variable(gamma), Variable(beta), 1e-5);
    expect_close(ghosted.y.data(), plain.y.data(), 1e-12, 1e-12);
    CHECK(ghosted.count == 6);
    CHECK(ghosted.group_count == 6);
    CHECK(ghosted.group_var.shape() == Shape{1, 2});
  }
}

TEST_CASE("ghost_batch_normalization gradients, double backprop and dtypes") {
  const Array x = random({4, 3, 2, 3}, 31), gamma = random({3}, 32, Dtype::float64, 0.5, 1.5),
              beta = random({3}, 33), x2 = random({6, 3}, 34);
  const gradient_check::CheckOptions loose{1e-3, 1e-4, 1e-3};
  check_gradients(ghost(2), {x, gamma, beta}, true, loose);
  check_gradients(ghost(2), {x2, gamma, beta}, true, loose);
  check_gradients(ghost(3), {x2, gamma, beta}, true, loose);
  // Away from the ReLU's kink: beta ±5 keeps channels 0 and 2 on and channel 1 off; a residual of ±0.2.
  const Array away_from_kink = Array::from_vector<double>({5, -5, 5}, {3});
  const Array small_residual = random({4, 3, 2, 3}, 35, Dtype::float64, -0.2, 0.2);
  check_gradients(ghost(2, F::Activation::relu), {x, gamma, away_from_kink}, true, loose);
  check_gradients(ghost(2, F::Activation::relu), {x, gamma, away_from_kink, small_residual}, true, loose);
  check_gradients(ghost(2), {x, gamma, beta, small_residual}, true, loose);
  check_forward_dtypes(ghost(2), {x, gamma, beta}, 10);
  check_forward_dtypes(ghost(2, F::Activation::relu), {x, gamma, beta, small_residual}, 10);
}

TEST_CASE("ghost_batch_normalization rejects bad arguments") {
  const Variable gamma(Array::ones({3})), beta(Array::zeros({3}));
  expect_error<ShapeError>(
      [&] { F::ghost_batch_normalization(Variable(random({10, 3, 2}, 41, Dtype::float32)), gamma, beta, 4); },
      {"N = 10", "group size 4"});
  expect_error<ValueError>(
      [&] { F::ghost_batch_normalization(Variable(random({4, 3}, 42, Dtype::float32)), gamma, beta, 0); },
      {"group size >= 1", "0"});
  expect_error<ShapeError>(
      [&] { F::ghost_batch_normalization(Variable(random({4, 3}, 43, Dtype::float32)), gamma, beta, 1); },
      {"more than one value per channel", "groups of 1"});
  expect_error<ShapeError>(
      [&] {
        F::ghost_batch_normalization(Variable(random({4, 3}, 44, Dtype::float32)), gamma, beta, 2, 1e-5,
                                     F::Activation::none, Variable(random({4, 2}, 45, Dtype::float32)));
      },
      {"residual", "(4, 3)", "(4, 2)"});
}

TEST_CASE("BatchNormalization with a group size: running averages of the groups, last-batch whole statistics") {
  const auto options = L::BatchNormalizationOptions(2).decay(0.5).group_size(2);
  L::BatchNormalization ghosted(options);
  CHECK(ghosted.group_size() == 2);
  const Array x = random({4, 2, 3}, 51, Dtype::float32, -1, 3);
  const Variable y = ghosted(Variable(x));
  expect_close(y.data(),
               per_group_reference(Variable(x), ghosted.param("gamma"), ghosted.param("beta"), 2).data(), 1e-4,
               1e-4);
  // Per channel: the mean of the two groups' means and of their unbiased variances (m = 6 values each).
  Array means = Array::zeros({2}, Dtype::float64), unbiased = Array::zeros({2}, Dtype::float64);
  for (int64_t g = 0; g < 2; ++g) {
    const Array part = x.get_item({Slice{2 * g, 2 * g + 2}}).astype(Dtype::float64);
    const Array mean = ops::mean(part, {0, 2});
    const Array var = ops::mean(ops::square(ops::sub(part, mean.reshape({1, 2, 1}))), {0, 2});
    means = ops::add(means, ops::div(mean, ops::scalar_like(2, mean)));
    unbiased = ops::add(unbiased, ops::mul(var, ops::scalar_like(6.0 / 5.0 / 2.0, var)));
  }
  expect_close(ghosted.persistent("avg_mean").astype(Dtype::float64), ops::mul(means, ops::scalar_like(0.5, means)),
               1e-6, 1e-5);
  expect_close(ghosted.persistent("avg_var").astype(Dtype::float64),
               ops::add(ops::mul(unbiased, ops::scalar_like(0.5, unbiased)), ops::scalar_like(0.5, unbiased)), 1e-6,
               1e-5);
  expect_error<ValueError>([] { L::BatchNormalization(L::BatchNormalizationOptions(2).group_size(-1)); },
                           {"group size >= 0", "-1"});
  expect_error<ShapeError>([&] { ghosted(Variable(random({5, 2}, 52, Dtype::float32))); }, {"N = 5", "group size 2"});
}

TEST_CASE("BatchNormalization without running averages keeps the whole batch's last_mean, last_var, last_count") {
  for (const int64_t group_size : {0, 2}) {
    INFO("group size ", group_size);
    L::BatchNormalization bn(L::BatchNormalizationOptions(2).use_running_average(false).group_size(group_size));
    CHECK(bn.persistent("last_count").dtype() == Dtype::int64);
    CHECK(bn.persistent("last_count").shape() == Shape{});
    const Array x = random({4, 2, 3}, 61, Dtype::float32, -1, 3);
    const Variable train_y = bn(Variable(x));
    const Array mean = ops::mean(x, {0, 2});
    const Array var = ops::mean(ops::square(ops::sub(x, mean.reshape({1, 2, 1}))), {0, 2});
    expect_close(bn.persistent("last_mean"), mean, 1e-5, 1e-5);
    expect_close(bn.persistent("last_var"), var, 1e-5, 1e-5);
    CHECK(bn.persistent("last_count").item<int64_t>() == 12);
    bn(Variable(random({2, 2, 5}, 62, Dtype::float32)));
    CHECK(bn.persistent("last_count").item<int64_t>() == 10);
  }
  L::BatchNormalization standard(2);
  expect_error<ValueError>([&] { standard.persistent("last_count"); }, {"last_count"});
}
