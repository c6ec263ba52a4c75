#include "testing.h"

#include <cmath>

using namespace kusari;
using namespace kusari::testing;

namespace {

// Batch normalization computed element by element in float64, for (N, C, H, W) or (N, C).
std::vector<double> reference_bn(const Array& x, const Array& gamma, const Array& beta, double eps) {
  const Shape& s = x.shape();
  const int64_t n = s[0], c = s[1], inner = x.size() / (n * c);
  const std::vector<double> v = x.to_vector<double>(), g = gamma.to_vector<double>(), b = beta.to_vector<double>();
  std::vector<double> out(v.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) mean += v[static_cast<size_t>((i * c + ch) * inner + k)];
    mean /= static_cast<double>(n * inner);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) var += std::pow(v[static_cast<size_t>((i * c + ch) * inner + k)] - mean, 2);
    var /= static_cast<double>(n * inner);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) {
        const size_t at = static_cast<size_t>((i * c + ch) * inner + k);
        out[at] = g[static_cast<size_t>(ch)] * (v[at] - mean) / std::sqrt(var + eps) + b[static_cast<size_t>(ch)];
      }
  }
  return out;
}

auto bn(double eps) {
  return [eps](const std::vector<Variable>& x) {
    return std::vector<Variable>{F::batch_normalization(x[0], x[1], x[2], eps).y};
  };
}

auto fixed_bn(double eps) {
  return [eps](const std::vector<Variable>& x) {
    return std::vector<Variable>{F::fixed_batch_normalization(x[0], x[1], x[2], x[3], x[4], eps)};
  };
}

// Backpropagates gy from a fused node's output and from the composed functions' output, and checks
// that each (fused, composed) pair of inputs received the same gradient.
void expect_same_gradients(const Variable& fused_y, const Variable& plain_y, const Array& gy,
                           const std::vector<std::pair<Variable, Variable>>& inputs) {
  Variable(fused_y).set_grad(gy);
  fused_y.backward();
  Variable(plain_y).set_grad(gy);
  plain_y.backward();
  for (const auto& [fused, plain] : inputs) expect_close(fused.grad(), plain.grad(), 1e-12, 1e-10);
}

// values as an array of `shape` on the default device.
Array on_default_device(std::vector<double> values, Shape shape) {
  return Array::from_vector(std::move(values), std::move(shape), {}, default_device());
}

// A device other than the default one (for the checks that refuse operands of two devices).
Device other_device() { return default_device() == Device::cpu() ? Device::loopback(0) : Device::cpu(); }

}  // namespace

TEST_CASE("batch_normalization normalises each channel with batch statistics") {
  const Array x = random({3, 2, 2, 2}, 1, Dtype::float64, -2, 3);
  const Array gamma = random({2}, 2, Dtype::float64, 0.5, 1.5), beta = random({2}, 3);
  const auto result = F::batch_normalization(Variable(x), Variable(gamma), Variable(beta), 1e-5);
  expect_values(result.y.data(), reference_bn(x, gamma, beta, 1e-5), 1e-10);
  CHECK(result.count == 12);
  CHECK(result.mean.shape() == Shape{2});
  const Array per_channel = ops::mean(x, {0, 2, 3});
  expect_close(result.mean.astype(Dtype::float64), per_channel, 1e-12);
  const Array centered = ops::sub(x, per_channel.reshape({1, 2, 1, 1}));
  expect_close(result.var.astype(Dtype::float64), ops::mean(ops::square(centered), {0, 2, 3}), 1e-12);
}

TEST_CASE("batch_normalization gradients, double backprop and dtypes") {
  const Array x4 = random({3, 2, 2, 3}, 4), x2 = random({5, 3}, 5);
  const Array g2 = random({2}, 6, Dtype::float64, 0.5, 1.5), b2 = random({2}, 7);
  const Array g3 = random({3}, 8, Dtype::float64, 0.5, 1.5), b3 = random({3}, 9);
  gradient_check::CheckOptions loose{1e-3, 1e-4, 1e-3};
  check_gradients(bn(1e-5), {x4, g2, b2}, true, loose);
  check_gradients(bn(1e-5), {x2, g3, b3}, true, loose);
  check_forward_dtypes(bn(1e-5), {x4, g2, b2}, 10);
}

TEST_CASE("batch_normalization with a fused ReLU equals relu after batch_normalization, both ways") {
  const Array x = random({4, 3, 2, 3}, 41), gamma = random({3}, 42, Dtype::float64, 0.5, 1.5),
              beta = random({3}, 43), gy = random({4, 3, 2, 3}, 44);
  Variable fused_x(x.copy()), fused_gamma(gamma.copy()), fused_beta(beta.copy());
  auto fused = F::batch_normalization(fused_x, fused_gamma, fused_beta, 1e-5, F::Activation::relu);
  Variable plain_x(x.copy()), plain_gamma(gamma.copy()), plain_beta(beta.copy());
  const auto plain = F::batch_normalization(plain_x, plain_gamma, plain_beta, 1e-5);
  Variable plain_y = F::relu(plain.y);
  expect_close(fused.y.data(), plain_y.data(), 1e-12, 1e-12);
  CHECK(ops::amin(fused.y.data()).item<double>() == 0);  // some outputs were rectified
  expect_close(fused.mean, plain.mean, 1e-12, 1e-12);
  expect_same_gradients(fused.y, plain_y, gy, {{fused_x, plain_x}, {fused_gamma, plain_gamma}, {fused_beta, plain_beta}});
  const auto bn_relu = [](const std::vector<Variable>& v) {
    return std::vector<Variable>{F::batch_normalization(v[0], v[1], v[2], 1e-5, F::Activation::relu).y};
  };
  // Finite differences across the kink are meaningless: shifts of ±5 keep channels 0 and 2 wholly on
  // and channel 1 wholly off (|x̂| stays below 5 for 24 values per channel).
  const Array away_from_kink = Array::from_vector<double>({5, -5, 5}, {3});
  check_gradients(bn_relu, {x, gamma, away_from_kink}, true, gradient_check::CheckOptions{1e-3, 1e-4, 1e-3});
  check_forward_dtypes(bn_relu, {x, gamma, beta}, 45);
  // NaN passes through the fused ReLU, as through relu.
  const Array with_nan = Array::from_vector<double>({1, 2, std::nan(""), 4}, {2, 2});
  CHECK(std::isnan(F::batch_normalization(Variable(with_nan), Variable(Array::ones({2}, Dtype::float64)),
                                          Variable(Array::zeros({2}, Dtype::float64)), 1e-5, F::Activation::relu)
                       .y.data()
                       .to_vector<double>()[2]));
}

TEST_CASE("batch_normalization with a residual equals bn(x) + residual before the activation, both ways") {
  const Array x = random({4, 3, 2, 3}, 61), gamma = random({3}, 62, Dtype::float64, 0.5, 1.5),
              beta = random({3}, 63), residual = random({4, 3, 2, 3}, 64), gy = random({4, 3, 2, 3}, 65);
  for (const F::Activation activation : {F::Activation::none, F::Activation::relu}) {
    INFO("relu ", activation == F::Activation::relu);
    Variable fused_x(x.copy()), fused_gamma(gamma.copy()), fused_beta(beta.copy()), fused_r(residual.copy());
    auto fused = F::batch_normalization(fused_x, fused_gamma, fused_beta, 1e-5, activation, fused_r);
    Variable plain_x(x.copy()), plain_gamma(gamma.copy()), plain_beta(beta.copy()), plain_r(residual.copy());
    Variable plain_y = F::batch_normalization(plain_x, plain_gamma, plain_beta, 1e-5).y + plain_r;
    if (activation == F::Activation::relu) plain_y = F::relu(plain_y);
    expect_close(fused.y.data(), plain_y.data(), 1e-12, 1e-12);
    expect_same_gradients(fused.y, plain_y, gy,
                          {{fused_x, plain_x}, {fused_gamma, plain_gamma}, {fused_beta, plain_beta}, {fused_r, plain_r}});
  }
  CHECK(ops::amin(F::relu(Variable(ops::add(x, residual))).data()).item<double>() == 0);  // the ReLU bites
  // Finite differences (and double backprop) away from the ReLU's kink: beta ±5 and a residual of ±0.2
  // keep channels 0 and 2 on and channel 1 off.
  const auto bn_add_relu = [](const std::vector<Variable>& v) {
    return std::vector<Variable>{F::batch_normalization(v[0], v[1], v[2], 1e-5, F::Activation::relu, v[3]).y};
  };
  const Array away_from_kink = Array::from_vector<double>({5, -5, 5}, {3});
  const Array small_residual = random({4, 3, 2, 3}, 66, Dtype::float64, -0.2, 0.2);
  check_gradients(bn_add_relu, {x, gamma, away_from_kink, small_residual}, true,
                  gradient_check::CheckOptions{1e-3, 1e-4, 1e-3});
  const auto bn_add = [](const std::vector<Variable>& v) {
    return std::vector<Variable>{F::batch_normalization(v[0], v[1], v[2], 1e-5, F::Activation::none, v[3]).y};
  };
  check_gradients(bn_add, {x, gamma, beta, residual}, true, gradient_check::CheckOptions{1e-3, 1e-4, 1e-3});
  check_forward_dtypes(bn_add_relu, {x, gamma, beta, residual}, 67);
  expect_error<ShapeError>(
      [&] {
        F::batch_normalization(Variable(x), Variable(gamma), Variable(beta), 1e-5, F::Activation::relu,
                               Variable(random({4, 3, 2, 2}, 68)));
      },
      {"residual", "(4, 3, 2, 3)", "(4, 3, 2, 2)"});
}

TEST_CASE("the BatchNormalization link adds a residual in training and evaluation modes") {
  const Array x = random({4, 3, 2, 2}, 71, Dtype::float32), residual = random({4, 3, 2, 2}, 72, Dtype::float32);
  L::BatchNormalization link(L::BatchNormalizationOptions(3).activation(F::Activation::relu));
  const Variable trained = link.forward(Variable(x), Variable(residual));
  expect_close(trained.data(),
               F::relu(F::batch_normalization(Variable(x), link.param("gamma"), link.param("beta"), link.eps()).y +
                       Variable(residual))
                   .data(),
               1e-6, 1e-5);
  link.set_train(false);
  const Variable evaluated = link.forward(Variable(x), Variable(residual));
  const Variable expected = F::relu(
      F::fixed_batch_normalization(Variable(x), link.param("gamma"), link.param("beta"),
                                   Variable(link.persistent("avg_mean")), Variable(link.persistent("avg_var")),
                                   link.eps()) +
      Variable(residual));
  expect_close(evaluated.data(), expected.data(), 1e-6, 1e-5);
}

TEST_CASE("fixed_batch_normalization uses the given statistics and differentiates them") {
  const Array x = random({2, 3, 2, 2}, 10), gamma = random({3}, 11, Dtype::float64, 0.5, 1.5);
  const Array beta = random({3}, 12), mean = random({3}, 13), var = random({3}, 14, Dtype::float64, 0.5, 2.0);
  Variable y = F::fixed_batch_normalization(Variable(x), Variable(gamma), Variable(beta), Variable(mean),
                                            Variable(var), 1e-5);
  const std::vector<double> xv = x.to_vector<double>(), gv = gamma.to_vector<double>(), bv = beta.to_vector<double>();
  const std::vector<double> mv = mean.to_vector<double>(), vv = var.to_vector<double>();
  std::vector<double> expected(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t c = (i / 4) % 3;
    expected[i] = gv[c] * (xv[i] - mv[c]) / std::sqrt(vv[c] + 1e-5) + bv[c];
  }
  expect_values(y.data(), expected, 1e-10);
  check_gradients(fixed_bn(1e-5), {x, gamma, beta, mean, var});
  check_forward_dtypes(fixed_bn(1e-5), {x, gamma, beta, mean, var}, 10);
}

TEST_CASE("batch normalization rejects bad shapes") {
  const Variable x(Array::zeros({4, 3, 2, 2})), good(Array::ones({3})), bad(Array::ones({4}));
  expect_error<ShapeError>([&] { F::batch_normalization(x, bad, good); }, {"batch_normalization", "(3,)", "(4,)"});
  expect_error<ShapeError>([&] { F::batch_normalization(Variable(Array::zeros({3})), good, good); },
                           {"(N, C, ...)", "(3,)"});
  expect_error<ShapeError>([&] { F::batch_normalization(Variable(Array::zeros({1, 3})), good, good); },
                           {"more than one value per channel"});
  expect_error<ShapeError>([&] { F::fixed_batch_normalization(x, good, good, good, bad); },
                           {"fixed_batch_normalization", "(4,)"});
}

namespace {

// A batch split into `parts` identical parts, as a process sees it: batch_sum multiplies by the number
// of parts (what an all-reduce over identical ranks gives, and its backward alike).
F::BatchSum identical_parts(double parts) {
  return [parts](const Variable& v) { return v * parts; };
}

auto split_bn(double parts) {
  return [parts](const std::vector<Variable>& x) {
    return std::vector<Variable>{F::split_batch_normalization(x[0], x[1], x[2], identical_parts(parts)).y};
  };
}

}  // namespace

TEST_CASE("split_batch_normalization of identical parts equals batch_normalization of their concatenation") {
  const Array x = random({3, 2, 2}, 21, Dtype::float64, -1, 2), gamma = random({2}, 22, Dtype::float64, 0.5, 1.5),
              beta = random({2}, 23), gy = random({3, 2, 2}, 24);
  for (double parts : {1.0, 3.0}) {
    INFO(parts, " parts");
    std::vector<Array> copies(static_cast<size_t>(parts), x);
    Variable whole_x(ops::concatenate(copies, 0)), whole_gamma(gamma.copy()), whole_beta(beta.copy());
    F::BatchNormalizationResult whole = F::batch_normalization(whole_x, whole_gamma, whole_beta);
    whole.y.set_grad(ops::concatenate(std::vector<Array>(static_cast<size_t>(parts), gy), 0));
    whole.y.backward();
    Variable part_x(x.copy()), part_gamma(gamma.copy()), part_beta(beta.copy());
    F::BatchNormalizationResult part = F::split_batch_normalization(part_x, part_gamma, part_beta, identical_parts(parts));
    part.y.set_grad(gy);
    part.y.backward();
    const auto first = [&](const Array& a) { return a.get_item({Slice{0, 3}}); };
    CHECK(part.count == whole.count);
    expect_close(part.mean, whole.mean, 1e-12, 1e-10);
    expect_close(part.var, whole.var, 1e-12, 1e-10);
    expect_close(part.y.data(), first(whole.y.data()), 1e-12, 1e-10);
    expect_close(part_x.grad(), first(whole_x.grad()), 1e-12, 1e-10);
    expect_close(part_gamma.grad() * parts, whole_gamma.grad(), 1e-12, 1e-10);
    expect_close(part_beta.grad() * parts, whole_beta.grad(), 1e-12, 1e-10);
  }
}

TEST_CASE("split_batch_normalization with a fused ReLU equals the whole batch's, both ways") {
  const Array x = random({3, 2, 2}, 51, Dtype::float64, -1, 2), gamma = random({2}, 52, Dtype::float64, 0.5, 1.5),
              beta = random({2}, 53), gy = random({3, 2, 2}, 54);
  // identical_parts(2) stands for a second part equal to this one, in x and in gy.
  Variable whole_x(ops::concatenate({x, x}, 0));
  auto whole = F::batch_normalization(whole_x, Variable(gamma), Variable(beta), 2e-5, F::Activation::relu);
  whole.y.set_grad(ops::concatenate({gy, gy}, 0));
  whole.y.backward();
  Variable part_x(x.copy());
  auto part = F::split_batch_normalization(part_x, Variable(gamma), Variable(beta), identical_parts(2), 2e-5,
                                           F::Activation::relu);
  part.y.set_grad(gy);
  part.y.backward();
  expect_close(part.y.data(), whole.y.data().get_item({Slice{0, 3}}), 1e-12, 1e-10);
  expect_close(part_x.grad(), whole_x.grad().get_item({Slice{0, 3}}), 1e-12, 1e-10);
}

TEST_CASE("split_batch_normalization with a residual equals the whole batch's, both ways") {
  const Array x = random({3, 2, 2}, 81, Dtype::float64, -1, 2), gamma = random({2}, 82, Dtype::float64, 0.5, 1.5),
              beta = random({2}, 83), residual = random({3, 2, 2}, 84), gy = random({3, 2, 2}, 85);
  Variable whole_x(ops::concatenate({x, x}, 0)), whole_r(ops::concatenate({residual, residual}, 0));
  auto whole = F::batch_normalization(whole_x, Variable(gamma), Variable(beta), 2e-5, F::Activation::relu, whole_r);
  whole.y.set_grad(ops::concatenate({gy, gy}, 0));
  whole.y.backward();
  Variable part_x(x.copy()), part_r(residual.copy());
  auto part = F::split_batch_normalization(part_x, Variable(gamma), Variable(beta), identical_parts(2), 2e-5,
                                           F::Activation::relu, part_r);
  part.y.set_grad(gy);
  part.y.backward();
  expect_close(part.y.data(), whole.y.data().get_item({Slice{0, 3}}), 1e-12, 1e-10);
  expect_close(part_x.grad(), whole_x.grad().get_item({Slice{0, 3}}), 1e-12, 1e-10);
  expect_close(part_r.grad(), whole_r.grad().get_item({Slice{0, 3}}), 1e-12, 1e-12);
}

TEST_CASE("split_batch_normalization gradients, double backprop, dtypes and errors") {
  const std::vector<Array> inputs = {random({3, 2, 2}, 31), random({2}, 32, Dtype::float64, 0.5, 1.5),
                                     random({2}, 33)};
  for (double parts : {1.0, 2.0}) {
    INFO(parts, " parts");
    check_gradients(split_bn(parts), inputs);
    check_forward_dtypes(split_bn(parts), inputs, 2);
  }
  const Variable good(Array::ones({3}));
  expect_error<ValueError>([&] { F::split_batch_normalization(Variable(Array::zeros({2, 3})), good, good, nullptr); },
                           {"split_batch_normalization", "batch_sum"});
  expect_error<ShapeError>(
      [&] { F::split_batch_normalization(Variable(Array::zeros({1, 3})), good, good, identical_parts(1)); },
      {"more than one value per channel", "all parts", "got 1"});
  expect_error<ShapeError>(
      [&] { F::split_batch_normalization(Variable(Array::zeros({2, 3})), Variable(Array::ones({4})), good, identical_parts(2)); },
      {"split_batch_normalization", "(3,)", "(4,)"});
}

namespace {

// Local response normalization by its definition, in float64 loops: the window of channel c is
// c - n/2 ... c + n/2 clipped to the existing channels.
std::vector<double> reference_lrn(const Array& x, int64_t n, double k, double alpha, double beta) {
  const Shape& s = x.shape();
  const int64_t batch = s[0], channels = s[1], inner = x.size() / (batch * channels), half = n / 2;
  const std::vector<double> v = x.to_vector<double>();
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < inner; ++p) {
        double sum = 0;
        for (int64_t d = std::max<int64_t>(0, c - half); d <= std::min(channels - 1, c + half); ++d) {
          sum += std::pow(v[static_cast<size_t>((i * channels + d) * inner + p)], 2);
        }
        const size_t at = static_cast<size_t>((i * channels + c) * inner + p);
        out[at] = v[at] / std::pow(k + alpha * sum, beta);
      }
  return out;
}

auto lrn(int64_t n, double k, double alpha, double beta) {
  return unary([=](const Variable& x) { return F::local_response_normalization(x, n, k, alpha, beta); });
}

}  // namespace

TEST_CASE("local_response_normalization divides by the windowed sum of squares across channels") {
  const Array x = random({2, 7, 2, 3}, 20, Dtype::float64, -3, 3);
  expect_values(F::local_response_normalization(Variable(x)).data(), reference_lrn(x, 5, 2, 1e-4, 0.75), 1e-12);
  for (const int64_t n : {1, 3, 4, 5, 9}) {
    INFO("n = ", n);
    expect_values(F::local_response_normalization(Variable(x), n, 1, 0.3, 0.6).data(), reference_lrn(x, n, 1, 0.3, 0.6),
                  1e-12);
  }
  const Array flat = random({3, 4}, 21, Dtype::float64, -3, 3);
  expect_values(F::local_response_normalization(Variable(flat), 3, 0.5, 1.0, 1.0).data(),
                reference_lrn(flat, 3, 0.5, 1.0, 1.0), 1e-12);
}

TEST_CASE("local_response_normalization gradients, double backprop and dtypes") {
  check_gradients(lrn(3, 1, 0.5, 0.75), {random({2, 5, 2, 2}, 22)});
  check_gradients(lrn(4, 2, 0.3, 0.6), {random({1, 3, 3}, 23, Dtype::float64, -2, 2)});
  check_gradients(lrn(5, 2, 1e-4, 0.75), {random({2, 6}, 24, Dtype::float64, -3, 3)});
  check_forward_dtypes(lrn(5, 2, 1e-4, 0.75), {random({2, 7, 2, 3}, 25, Dtype::float64, -3, 3)});
  check_forward_dtypes(lrn(3, 1, 0.5, 0.75), {random({2, 5, 2, 2}, 26)});
}

TEST_CASE("local_response_normalization rejects bad arguments") {
  expect_error<ShapeError>([] { F::local_response_normalization(Variable(Array::zeros({4}))); },
                           {"local_response_normalization", "(N, C, ...)", "(4,)"});
  expect_error<DtypeError>([] { F::local_response_normalization(Variable(Array::zeros({2, 3}, Dtype::int32))); },
                           {"local_response_normalization", "int32"});
  expect_error<ValueError>([] { F::local_response_normalization(Variable(Array::zeros({2, 3})), 0); },
                           {"local_response_normalization", "n >= 1", "0"});
}

TEST_CASE("the batch normalization routines: a whole batch against the reference, the ReLU's gates, errors") {
  const Array x = random({4, 3, 2, 2}, 31, Dtype::float64, -1, 2), gamma = random({3}, 32, Dtype::float64, 0.5, 1.5),
              beta = random({3}, 33), residual = random({4, 3, 2, 2}, 34), gy = random({4, 3, 2, 2}, 35);
  const BatchNormForwardResult plain = ops::batch_normalization(x, gamma, beta, Array(), 1e-5, false);
  expect_close(plain.y, Array::from_vector(reference_bn(x, gamma, beta, 1e-5), x.shape(), Dtype::float64), 1e-12, 1e-10);
  CHECK(plain.statistics.count == 16);
  CHECK(plain.statistics.mean.dtype() == Dtype::float64);
  expect_close(plain.statistics.mean, ops::mean(x, std::vector<int64_t>{0, 2, 3}), 1e-12, 1e-10);
  expect_close(plain.statistics.inv_std,
               ops::reciprocal(ops::sqrt(ops::add(plain.statistics.var, ops::scalar_like(1e-5, plain.statistics.var)))),
               1e-12, 1e-10);
  // The fused ReLU after the residual, and its gradients, against the functions composed of parts.
  const BatchNormForwardResult fused = ops::batch_normalization(x, gamma, beta, residual, 1e-5, true);
  const Array pre = ops::add(plain.y, residual);
  expect_close(fused.y, ops::maximum(pre, ops::scalar_like(0, pre)), 1e-12, 1e-10);
  Variable vx(x.copy()), vgamma(gamma.copy()), vbeta(beta.copy());
  Variable composed = F::relu(F::batch_normalization(vx, vgamma, vbeta, 1e-5).y + Variable(residual, false));
  composed.set_grad(gy);
  composed.backward();
  const BatchNormGradients g = ops::batch_normalization_backward(x, gamma, gy, fused.y, fused.statistics, true, true);
  expect_close(g.gx, vx.grad(), 1e-12, 1e-10);
  expect_close(g.ggamma, vgamma.grad(), 1e-12, 1e-10);
  expect_close(g.gbeta, vbeta.grad(), 1e-12, 1e-10);
  CHECK_FALSE(ops::batch_normalization_backward(x, gamma, gy, Array(), plain.statistics, false, false).gx.defined());
  expect_error<ValueError>([&] { ops::batch_normalization_backward(x, gamma, gy, Array(), fused.statistics, true, true); },
                           {"batch_normalization_backward", "output y", "residual"});
  // A ReLU without a residual: the passes recompute its gate from x and ask for no output; a backend
  // whose fused backward reads it (cuDNN's) says so in the statistics, and then the output is required.
  const BatchNormForwardResult relu_only = ops::batch_normalization(x, gamma, beta, Array(), 1e-5, true);
  CHECK(fused.statistics.backward_reads_output);
  CHECK_FALSE(relu_only.statistics.backward_reads_output);
  CHECK_FALSE(plain.statistics.backward_reads_output);
  BatchNormStatistics reads_output = relu_only.statistics;
  reads_output.backward_reads_output = true;
  expect_error<ValueError>([&] { ops::batch_normalization_backward(x, gamma, gy, Array(), reads_output, true, true); },
                           {"batch_normalization_backward", "output y", "device's backward reads it"});
  expect_close(ops::batch_normalization_backward(x, gamma, gy, relu_only.y, reads_output, true, true).gx,
               ops::batch_normalization_backward(x, gamma, gy, Array(), relu_only.statistics, true, true).gx, 0, 0);

  expect_error<ShapeError>([&] { ops::batch_normalization(x, Array::ones({4}, Dtype::float64), beta, Array(), 1e-5, false); },
                           {"batch_normalization", "(3,)", "(4,)"});
  expect_error<ShapeError>([&] { ops::batch_normalization(x, gamma, beta, random({4, 3, 2}, 36), 1e-5, false); },
                           {"(4, 3, 2, 2)", "(4, 3, 2)"});
  expect_error<DtypeError>([&] { ops::batch_normalization(x.astype(Dtype::int32), gamma, beta, Array(), 1e-5, false); },
                           {"floating", "int32"});
  expect_error<DtypeError>([&] { ops::batch_normalization(x, gamma, beta.astype(Dtype::int64), Array(), 1e-5, false); },
                           {"per-channel", "floating", "int64"});
  const Device elsewhere = other_device();
  expect_error<DeviceError>([&] { ops::batch_normalization(x, gamma.to(elsewhere), beta, Array(), 1e-5, false); },
                            {"batch_normalization", cat(default_device()), cat(elsewhere)});
}

TEST_CASE("batch normalization's statistics and backward coefficients from sums are the elementwise formulas' bits") {
  // Two groups of three channels, 8 elements each; group 1's channel 2 has Σx²/n below mean² (as rounding
  // can leave it), whose variance clamps to 0. Gamma and beta of two dtypes (a device widens them). The
  // one-launch kernels round each operation as the elementwise routines do, one array operation at a time
  // (which no compiler fuses), so the results are the same bits.
  const auto same = [](const Array& got, const Array& expected, const char* what) {
    INFO(what);
    CHECK(got.shape() == expected.shape());
    CHECK(got.to_vector<double>() == expected.to_vector<double>());
  };
  const double eps = 1e-5;
  const Array sums = on_default_device({4.0, -2.5, 1.0, 0.5, 3.0, 8.0}, {2, 3});
  const Array square_sums = on_default_device({10.0, 6.0, 3.0, 2.0, 9.5, 7.9}, {2, 3});
  const Array gamma = on_default_device({0.5, 1.25, -2.0}, {3}).astype(Dtype::float32);
  const Array beta = on_default_device({0.25, -1.0, 0.75}, {3}).astype(Dtype::float16);
  const BatchNormStatistics s = ops::batch_norm_statistics_of_sums(sums, square_sums, 8, eps, gamma, beta);
  CHECK(s.count == 8);
  const Array n = ops::scalar_like(8, sums), gamma64 = gamma.astype(Dtype::float64);
  const Array mean = ops::div(sums, n);
  const Array var = ops::maximum(ops::sub(ops::div(square_sums, n), ops::square(mean)), ops::scalar_like(0, mean));
  const Array inv_std = ops::reciprocal(ops::sqrt(ops::add(var, ops::scalar_like(eps, var))));
  const Array scale = ops::mul(gamma64, inv_std);
  same(s.mean, mean, "mean");
  same(s.var, var, "var");
  same(s.inv_std, inv_std, "inv_std");
  same(s.scale, scale, "scale");
  same(s.shift, ops::sub(beta.astype(Dtype::float64), ops::mul(mean, scale)), "shift");
  CHECK(s.var.get_item({1, 2}).item<double>() == 0.0);

  const Array gy_sums = on_default_device({1.5, -0.5, 2.0, 0.25, -3.0, 1.0}, {2, 3});
  const Array gy_x_sums = on_default_device({2.0, 1.0, -1.5, 0.5, 2.5, -0.75}, {2, 3});
  const Array totals_beta = on_default_device({3.0, 1.0, -2.0, 0.5, 4.0, -1.0}, {2, 3});
  const Array totals_gamma = on_default_device({-1.0, 2.0, 0.5, 1.5, -2.5, 3.0}, {2, 3});
  const Array ggamma = ops::mul(inv_std, ops::sub(gy_x_sums, ops::mul(mean, gy_sums)));
  const BatchNormCoefficients alone = ops::batch_norm_backward_coefficients(gy_sums, gy_x_sums, s, gamma, false);
  same(alone.ggamma, ggamma, "ggamma alone");
  CHECK_FALSE(alone.a.defined());
  for (const bool totals : {false, true}) {
    INFO("totals ", totals);
    const BatchNormCoefficients c =
        totals ? ops::batch_norm_backward_coefficients(gy_sums, gy_x_sums, s, gamma, true, totals_beta, totals_gamma)
               : ops::batch_norm_backward_coefficients(gy_sums, gy_x_sums, s, gamma, true);
    const Array gbeta_all = totals ? totals_beta : gy_sums, ggamma_all = totals ? totals_gamma : ggamma;
    const Array a = ops::mul(gamma64, inv_std);
    const Array b = ops::neg(ops::div(ops::mul(ops::mul(a, ggamma_all), inv_std), n));
    same(c.ggamma, ggamma, "ggamma");
    same(c.a, a, "a");
    same(c.b, b, "b");
    same(c.d, ops::sub(ops::neg(ops::div(ops::mul(a, gbeta_all), n)), ops::mul(b, mean)), "d");
  }

  expect_error<ShapeError>([&] { ops::batch_norm_statistics_of_sums(sums.reshape({3, 2}), square_sums.reshape({3, 2}),
                                                                    8, eps, gamma, beta); },
                           {"batch_norm_statistics_of_sums", "(3,) or (G, 3)", "(3, 2)"});
  expect_error<ShapeError>([&] {
    ops::batch_norm_statistics_of_sums(sums, on_default_device({1, 2, 3}, {3}), 8, eps, gamma, beta);
  },
                           {"one shape", "(2, 3)", "(3,)"});
  expect_error<ShapeError>([&] { ops::batch_norm_statistics_of_sums(sums, square_sums, 8, eps, gamma,
                                                                    on_default_device({1, 2}, {2})); },
                           {"per-channel parameters", "(3,)", "(2,)"});
  expect_error<DtypeError>([&] { ops::batch_norm_statistics_of_sums(sums, square_sums, 8, eps, gamma,
                                                                    beta.astype(Dtype::int32)); },
                           {"floating per-channel parameters", "int32"});
  const Device elsewhere = other_device();
  expect_error<DeviceError>([&] { ops::batch_norm_statistics_of_sums(sums, square_sums.to(elsewhere), 8, eps, gamma,
                                                                     beta); },
                            {"batch_norm_statistics_of_sums", cat(elsewhere)});
  expect_error<ShapeError>([&] { ops::batch_norm_backward_coefficients(gy_sums, gy_x_sums.reshape({6}), s, gamma,
                                                                       true); },
                           {"batch_norm_backward_coefficients", "(6,)"});
  expect_error<ValueError>([&] { ops::batch_norm_backward_coefficients(gy_sums, gy_x_sums, s, gamma, true,
                                                                       totals_beta); },
                           {"both totals", "got one"});
  expect_error<ValueError>([&] { ops::batch_norm_statistics_of_sums(Array(), square_sums, 8, eps, gamma, beta); },
                           {"batch_norm_statistics_of_sums", "per-channel operand is undefined"});
  expect_error<ValueError>([&] { ops::batch_norm_statistics_of_sums(sums, square_sums, 8, eps, Array(), beta); },
                           {"batch_norm_statistics_of_sums", "gamma is undefined"});
  expect_error<ValueError>([&] { ops::batch_norm_statistics_of_sums(sums, square_sums, 8, eps, gamma, Array()); },
                           {"batch_norm_statistics_of_sums", "per-channel parameter is undefined"});
  BatchNormStatistics without_mean = s;
  without_mean.mean = Array();
  expect_error<ValueError>([&] { ops::batch_norm_backward_coefficients(gy_sums, gy_x_sums, without_mean, gamma,
                                                                       true); },
                           {"batch_norm_backward_coefficients", "per-channel operand is undefined"});
  expect_error<ValueError>([&] { ops::batch_norm_backward_coefficients(gy_sums, gy_x_sums, s, Array(), true); },
                           {"batch_norm_backward_coefficients", "gamma is undefined"});
}

TEST_CASE("batch_norm_running_averages: both averages in one pass, the elementwise formulas' bits; bad input "
          "named") {
  // decay·average + share·batch with the batch rounded to the averages' dtype first and each product
  // rounded apart: what astype, two multiplications and an addition (one array operation at a time) give.
  const auto channels_of = [](std::vector<double> values, Dtype dtype) {
    const auto n = static_cast<int64_t>(values.size());
    return on_default_device(std::move(values), {n}).astype(dtype);
  };
  const double decay = 0.9, mean_share = 0.1, var_share = 0.1 * 64 / 63;
  for (const Dtype averages : {Dtype::float32, Dtype::float64}) {
    for (const Dtype statistics : {Dtype::float32, Dtype::float64}) {
      INFO("averages ", averages, ", statistics ", statistics);
      const Array mean = channels_of({0.3, -1.7, 2.25, 1e-3}, statistics);
      const Array var = channels_of({1.1, 0.37, 4.5, 1e-7}, statistics);
      const Array average_mean = channels_of({0.1, -0.2, 0.7, 0.0}, averages);
      const Array average_var = channels_of({1.0, 0.9, 3.3, 1.0}, averages);
      const auto expected = [&](const Array& average, const Array& batch, double share) {
        return ops::add(ops::mul(average, ops::scalar_like(decay, average)),
                        ops::mul(batch.astype(averages), ops::scalar_like(share, average)))
            .to_vector<double>();
      };
      const std::vector<double> mean_after = expected(average_mean, mean, mean_share);
      const std::vector<double> var_after = expected(average_var, var, var_share);
      ops::batch_norm_running_averages(mean, var, decay, mean_share, var_share, average_mean, average_var);
      CHECK(average_mean.to_vector<double>() == mean_after);
      CHECK(average_var.to_vector<double>() == var_after);
    }
  }

  const Array mean = channels_of({0.5, 1.5}, Dtype::float32), var = channels_of({1, 2}, Dtype::float32);
  const Array average = channels_of({0, 0}, Dtype::float32), other = channels_of({1, 1}, Dtype::float32);
  const char* op = "batch_norm_running_averages";
  expect_error<ValueError>([&] { ops::batch_norm_running_averages(mean, Array(), 0.9, 0.1, 0.1, average, other); },
                           {op, "undefined"});
  expect_error<ShapeError>([&] {
    ops::batch_norm_running_averages(mean, var, 0.9, 0.1, 0.1, channels_of({0, 0, 0}, Dtype::float32), other);
  }, {op, "(3,)", "(2,)"});
  expect_error<ShapeError>([&] {
    ops::batch_norm_running_averages(mean.reshape({1, 2}), var.reshape({1, 2}), 0.9, 0.1, 0.1,
                                     average.reshape({1, 2}), other.reshape({1, 2}));
  }, {op, "(C,)", "(1, 2)"});
  expect_error<DtypeError>([&] {
    ops::batch_norm_running_averages(mean, var, 0.9, 0.1, 0.1, average.astype(Dtype::float16), other);
  }, {op, "float16", "float32"});
  expect_error<DtypeError>([&] {
    ops::batch_norm_running_averages(mean, var.astype(Dtype::float64), 0.9, 0.1, 0.1, average, other);
  }, {op, "batch mean and variance", "float32 and float64"});
  expect_error<ValueError>([&] {
    const Array wide = channels_of({0, 9, 0, 9}, Dtype::float32).reshape({2, 2});
    ops::batch_norm_running_averages(mean, var, 0.9, 0.1, 0.1, wide.get_item({Slice{}, 0}), other);
  }, {op, "contiguous", "running mean"});
  const Device elsewhere = other_device();
  expect_error<DeviceError>([&] {
    ops::batch_norm_running_averages(mean, var.to(elsewhere), 0.9, 0.1, 0.1, average, other);
  }, {op, cat(elsewhere)});
}

TEST_CASE("the batch normalization routines of a batch split in unequal parts equal the whole batch's") {
  const Array x = random({5, 2, 3}, 41, Dtype::float64, -1, 2), gamma = random({2}, 42, Dtype::float64, 0.5, 1.5),
              beta = random({2}, 43), gy = random({5, 2, 3}, 44);
  const auto rows = [](const Array& a, int64_t begin, int64_t end) { return a.get_item({Slice{begin, end}}).copy(); };
  const Array xa = rows(x, 0, 2), xb = rows(x, 2, 5), gya = rows(gy, 0, 2), gyb = rows(gy, 2, 5);
  const BatchNormForwardResult whole = ops::batch_normalization(x, gamma, beta, Array(), 1e-5, true);
  const BatchNormGradients whole_g = ops::batch_normalization_backward(x, gamma, gy, Array(), whole.statistics, true, true);
  // Part a's view of the other part, b: what part_sum would add from it (its sums, count and dtype code).
  const std::pair<Array, Array> sums_b = ops::channel_sums(xb, xb);
  const Array& sum_b = sums_b.first;
  const Array& square_sum_b = sums_b.second;
  const double code = static_cast<double>(Dtype::float64) + 1;
  const auto forward_from_b = [&](double b_code) {
    const Array tail = Array::from_vector(std::vector<double>{9, 1, b_code, b_code * b_code}, {4}, Dtype::float64);
    return ops::concatenate({sum_b, square_sum_b, tail}, 0);
  };
  int calls = 0;
  const BatchNormForwardResult a = ops::batch_normalization(xa, gamma, beta, Array(), 1e-5, true, [&](const Array& t) {
    ++calls;
    return ops::add(t, forward_from_b(code));
  });
  CHECK(calls == 1);
  CHECK(a.statistics.count == 15);
  expect_close(a.statistics.mean, whole.statistics.mean, 1e-12, 1e-10);
  expect_close(a.statistics.var, whole.statistics.var, 1e-12, 1e-10);
  expect_close(a.y, rows(whole.y, 0, 2), 1e-12, 1e-10);
  // b's share of Σgy and Σgy·x̂: its gradients of beta and gamma under the whole batch's statistics.
  const BatchNormGradients share_b =
      ops::batch_normalization_backward(xb, gamma, gyb, Array(), whole.statistics, true, false);
  const BatchNormGradients ga = ops::batch_normalization_backward(
      xa, gamma, gya, Array(), a.statistics, true, true,
      [&](const Array& t) { return ops::add(t, ops::concatenate({share_b.gbeta, share_b.ggamma}, 0)); });
  expect_close(ga.gx, rows(whole_g.gx, 0, 2), 1e-12, 1e-10);
  expect_close(ops::add(ga.ggamma, share_b.ggamma), whole_g.ggamma, 1e-12, 1e-10);
  expect_close(ops::add(ga.gbeta, share_b.gbeta), whole_g.gbeta, 1e-12, 1e-10);
  // A part computing in float32 beside this float64 one, and a part sum of the wrong length.
  expect_error<DtypeError>([&] {
    ops::batch_normalization(xa, gamma, beta, Array(), 1e-5, false, [&](const Array& t) {
      return ops::add(t, forward_from_b(static_cast<double>(Dtype::float32) + 1));
    });
  }, {"split_batch_normalization", "float64", "differ"});
  expect_error<ShapeError>([&] {
    ops::batch_normalization(xa, gamma, beta, Array(), 1e-5, false, [](const Array& t) { return t.get_item({Slice{0, 2}}); });
  }, {"part sum", "(8,)", "(2,)"});
  expect_error<ShapeError>([&] {
    ops::batch_normalization_backward(xa, gamma, gya, Array(), a.statistics, true, true,
                                      [](const Array& t) { return t.get_item({Slice{0, 3}}); });
  }, {"part sum", "(4,)", "(3,)"});
}
