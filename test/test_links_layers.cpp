#include "testing.h"

#include <cmath>

using namespace kusari;
using namespace kusari::testing;
namespace init = L::initializers;

namespace {

std::vector<std::string> param_names(const L::Link& link) {
  std::vector<std::string> names;
  for (const auto& [name, v] : link.namedparams()) names.push_back(name);
  return names;
}

// Per-channel mean and biased variance of x (N, C, ...), in float64.
struct ChannelStats {
  std::vector<double> mean, var;
  int64_t count;
};

ChannelStats channel_stats(const Array& x) {
  const int64_t n = x.shape()[0], c = x.shape()[1], inner = x.size() / (n * c);
  const std::vector<double> v = x.to_vector<double>();
  ChannelStats s{std::vector<double>(c, 0.0), std::vector<double>(c, 0.0), n * inner};
  for (int64_t ch = 0; ch < c; ++ch) {
    auto at = [&](int64_t i, int64_t k) { return v[static_cast<size_t>((i * c + ch) * inner + k)]; };
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) s.mean[ch] += at(i, k) / static_cast<double>(s.count);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) s.var[ch] += std::pow(at(i, k) - s.mean[ch], 2) / static_cast<double>(s.count);
  }
  return s;
}

// (x - mean) / sqrt(var + eps) per channel of x (N, C, ...), unit scale and zero shift.
std::vector<double> normalized(const Array& x, const std::vector<double>& mean, const std::vector<double>& var,
                               double eps) {
  const int64_t c = x.shape()[1], inner = x.size() / (x.shape()[0] * c);
  std::vector<double> v = x.to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t ch = (i / static_cast<size_t>(inner)) % static_cast<size_t>(c);
    v[i] = (v[i] - mean[ch]) / std::sqrt(var[ch] + eps);
  }
  return v;
}

}  // namespace

TEST_CASE("Linear computes F::linear of its parameters, W (out, in) and zero b") {
  L::Linear layer(4, 3);
  CHECK(param_names(layer) == std::vector<std::string>{"/W", "/b"});
  CHECK(layer.param("W").shape() == Shape{3, 4});
  expect_values(layer.param("b").data(), {0, 0, 0});
  CHECK(ops::amax(ops::abs(layer.param("W").data())).item<double>() > 0);
  const Variable x(random({2, 4}, 1, Dtype::float32));
  expect_close(layer(x).data(), F::linear(x, layer.param("W"), layer.param("b")).data());
  CHECK(layer.out_size() == 3);
}

TEST_CASE("LinearOptions set the bias and the initializers") {
  L::Linear plain(L::LinearOptions(2, 3).nobias().initial_w(init::Constant(0.5)));
  CHECK(param_names(plain) == std::vector<std::string>{"/W"});
  expect_values(plain(Variable(Array::ones({1, 2}))).data(), {1, 1, 1});
  L::Linear shifted(L::LinearOptions(2, 2).initial_w(init::Zero()).initial_bias(init::Constant(-2)));
  expect_values(shifted(Variable(Array::ones({1, 2}))).data(), {-2, -2});
  expect_error<ValueError>([] { L::Linear(L::LinearOptions(2, 0)); }, {"Linear", "out_size >= 1", "0"});
}

TEST_CASE("Linear infers its input size at the first forward") {
  L::Linear layer(L::LinearOptions(3).initial_w(init::Constant(1)));
  CHECK(param_names(layer) == std::vector<std::string>{"/b"});
  const Variable x(random({2, 2, 3}, 2, Dtype::float32));
  const Variable y = layer(x);
  CHECK(layer.param("W").shape() == Shape{3, 6});
  expect_close(y.data(), F::linear(x, layer.param("W"), layer.param("b")).data());
  L::Linear zero_in(L::LinearOptions(0, 2));
  CHECK_FALSE(zero_in.is_initialized("W"));
  expect_error<ShapeError>([&] { zero_in(Variable(Array::ones({3}))); }, {"Linear", "(N, ...)", "(3,)"});
}

TEST_CASE("Convolution2D computes F::convolution_2d of its parameters with its options") {
  L::Convolution2D conv(L::Convolution2DOptions(4, 6, {3, 2}).stride(2).pad({1, 0}).dilation(1).groups(2)
                            .cover_all(true).initial_bias(init::Uniform(1.0)));
  CHECK(conv.param("W").shape() == Shape{6, 2, 3, 2});
  CHECK(conv.conv_params().groups == 2);
  const Variable x(random({2, 4, 5, 6}, 3, Dtype::float32));
  const F::Convolution2DParams params{.stride = 2, .pad = {1, 0}, .groups = 2, .cover_all = true};
  expect_close(conv(x).data(), F::convolution_2d(x, conv.param("W"), conv.param("b"), params).data(), 1e-5);
  L::Convolution2D plain(L::Convolution2DOptions(3, 2, 1).nobias());
  CHECK(param_names(plain) == std::vector<std::string>{"/W"});
  const Variable x3(random({1, 3, 2, 2}, 4, Dtype::float32));
  expect_close(plain(x3).data(), F::convolution_2d(x3, plain.param("W")).data());
}

TEST_CASE("Convolution2D infers its input channels at the first forward") {
  L::Convolution2D conv(L::Convolution2DOptions(4, 3).pad(1));
  CHECK_FALSE(conv.is_initialized("W"));
  const Variable x(random({1, 5, 4, 4}, 5, Dtype::float32));
  CHECK(conv(x).shape() == Shape{1, 4, 4, 4});
  CHECK(conv.param("W").shape() == Shape{4, 5, 3, 3});
  L::Convolution2D grouped(L::Convolution2DOptions(4, 3).groups(2));
  expect_error<ShapeError>([&] { grouped(x); }, {"Convolution2D", "divisible by groups 2", "5"});
  CHECK_FALSE(grouped.is_initialized("W"));
  expect_error<ShapeError>([&] { grouped(Variable(Array::ones({2, 4}))); }, {"(N, C, H, W)", "(2, 4)"});
  expect_error<ValueError>([] { L::Convolution2D(L::Convolution2DOptions(3, 5, 3).groups(2)); },
                           {"out_channels divisible by groups 2", "5"});
}

TEST_CASE("BatchNormalization keeps decayed running averages with the unbiased variance") {
  L::BatchNormalization bn(L::BatchNormalizationOptions(3).decay(0.8).eps(1e-3));
  CHECK(param_names(bn) == std::vector<std::string>{"/beta", "/gamma"});
  const Array x1 = random({4, 3, 2, 2}, 6, Dtype::float32, -1, 3), x2 = random({4, 3, 2, 2}, 7, Dtype::float32, -2, 1);
  const Variable y1 = bn(Variable(x1));
  bn(Variable(x2));
  const ChannelStats s1 = channel_stats(x1), s2 = channel_stats(x2);
  const double unbias = 16.0 / 15.0;
  std::vector<double> mean(3), var(3);
  for (size_t c = 0; c < 3; ++c) {
    mean[c] = 0.8 * (0.8 * 0 + 0.2 * s1.mean[c]) + 0.2 * s2.mean[c];
    var[c] = 0.8 * (0.8 * 1 + 0.2 * s1.var[c] * unbias) + 0.2 * s2.var[c] * unbias;
  }
  expect_values(bn.persistent("avg_mean"), mean, 1e-5);
  expect_values(bn.persistent("avg_var"), var, 1e-5);
  expect_values(bn.persistent("N"), {0});
  expect_values(y1.data(), normalized(x1, s1.mean, s1.var, 1e-3), 1e-4);

  bn.set_train(false);
  const Array x3 = random({2, 3, 2, 2}, 8, Dtype::float32);
  expect_values(bn(Variable(x3)).data(), normalized(x3, mean, var, 1e-3), 1e-4);
  expect_values(bn.persistent("avg_mean"), mean, 1e-5);
  bn.set_train(true);
  {
    auto eval = using_train_mode(false);
    expect_values(bn(Variable(x3)).data(), normalized(x3, mean, var, 1e-3), 1e-4);
  }
  expect_values(bn.persistent("avg_var"), var, 1e-5);
}

TEST_CASE("BatchNormalization in training mode matches F::batch_normalization and backpropagates") {
  L::BatchNormalization bn(L::BatchNormalizationOptions(2).initial_gamma(init::Constant(2)).initial_beta(init::One()));
  const Variable x(random({3, 2}, 9, Dtype::float32));
  const Variable y = bn(x);
  expect_close(y.data(), F::batch_normalization(x, bn.param("gamma"), bn.param("beta")).y.data(), 1e-5);
  F::sum(y * y).backward();
  CHECK(bn.param("gamma").grad().defined());
  CHECK(bn.param("beta").grad().defined());
  CHECK(x.grad().defined());
}

TEST_CASE("BatchNormalization finetune keeps the cumulative average of the batches") {
  L::BatchNormalization bn(L::BatchNormalizationOptions(2).finetune());
  std::vector<double> mean(2, 0.0), var(2, 0.0);
  for (uint64_t seed = 10; seed < 13; ++seed) {
    const Array x = random({5, 2, 3}, seed, Dtype::float32, -1, 2);
    bn(Variable(x));
    const ChannelStats s = channel_stats(x);
    for (size_t c = 0; c < 2; ++c) {
      mean[c] += s.mean[c] / 3;
      var[c] += s.var[c] * 15.0 / 14.0 / 3;
    }
  }
  expect_values(bn.persistent("N"), {3});
  expect_values(bn.persistent("avg_mean"), mean, 1e-5);
  expect_values(bn.persistent("avg_var"), var, 1e-5);
  bn.set_finetune(false);
  bn.set_finetune(true);
  expect_values(bn.persistent("N"), {0});
  const Array x = random({5, 2, 3}, 20, Dtype::float32);
  bn(Variable(x));
  expect_values(bn.persistent("avg_mean"), channel_stats(x).mean, 1e-5);
}

TEST_CASE("BatchNormalization options: zero_gamma, no gamma or beta, decay and eps checks") {
  L::BatchNormalization zeroed(L::BatchNormalizationOptions(3).zero_gamma());
  expect_values(zeroed.param("gamma").data(), {0, 0, 0});
  expect_values(zeroed(Variable(random({4, 3}, 21, Dtype::float32))).data(), std::vector<double>(12, 0.0));
  L::BatchNormalization restored(L::BatchNormalizationOptions(2).zero_gamma().zero_gamma(false));
  expect_values(restored.param("gamma").data(), {1, 1});

  L::BatchNormalization bare(L::BatchNormalizationOptions(2).use_gamma(false).use_beta(false));
  CHECK(bare.namedparams().empty());
  const Array x = random({3, 2, 2}, 22, Dtype::float32);
  const ChannelStats s = channel_stats(x);
  expect_values(bare(Variable(x)).data(), normalized(x, s.mean, s.var, 2e-5), 1e-4);
  CHECK(bare.decay() == 0.9);
  CHECK(bare.eps() == 2e-5);
  expect_error<ValueError>([] { L::BatchNormalization(L::BatchNormalizationOptions(2).decay(1.5)); }, {"decay", "1.5"});
  expect_error<ValueError>([] { L::BatchNormalization(L::BatchNormalizationOptions(0)); }, {"size >= 1", "0"});
}

TEST_CASE("BatchNormalization without running averages evaluates with the last training batch") {
  L::BatchNormalization bn(L::BatchNormalizationOptions(3).use_running_average(false));
  bn(Variable(random({4, 3}, 23, Dtype::float32)));
  const Array last = random({4, 3, 2}, 24, Dtype::float32, -2, 5);
  const Variable train_y = bn(Variable(last));
  const ChannelStats s = channel_stats(last);
  expect_values(bn.persistent("last_mean"), s.mean, 1e-5);
  expect_values(bn.persistent("last_var"), s.var, 1e-5);
  bn.set_train(false);
  expect_close(bn(Variable(last)).data(), train_y.data(), 1e-5, 1e-4);
  L::BatchNormalization standard(3);
  expect_error<ValueError>([&] { standard.persistent("last_mean"); }, {"last_mean"});
}

TEST_CASE("BatchNormalization copies are independent") {
  L::BatchNormalization bn(2);
  auto copied = std::dynamic_pointer_cast<L::BatchNormalization>(bn.copy());
  REQUIRE(copied);
  (*copied)(Variable(random({4, 2}, 25, Dtype::float32, 1, 2)));
  expect_values(bn.persistent("avg_mean"), {0, 0});
  CHECK(copied->persistent("avg_mean").to_vector<double>()[0] > 0);
}

TEST_CASE("Classifier returns the loss and keeps the loss and accuracy") {
  auto predictor = std::make_shared<L::Linear>(L::LinearOptions(3, 2).initial_w(init::Zero()));
  predictor->param("W").data().assign(Array::from_vector<float>({1, 0, 0, 0, 1, 0}, {2, 3}));
  L::Classifier model(predictor);
  CHECK(!model.last_loss().defined());
  CHECK(model.child<L::Linear>("predictor") == predictor);
  CHECK(param_names(model) == std::vector<std::string>{"/predictor/W", "/predictor/b"});
  const Variable x(Array::from_vector<float>({2, 0, 0, 0, 1, 0, 3, 1, 0, 0, 0, 1}, {4, 3}));
  const Variable t(Array::from_vector<int32_t>({0, 1, 1, 0}, {4}));
  const Variable loss = model(x, t);
  const Variable y = (*predictor)(x);
  expect_close(loss.data(), F::softmax_cross_entropy(y, t).data());
  CHECK(model.last_loss().is(loss));
  expect_values(model.last_accuracy().data(), {0.75});  // predictions 0, 1, 0, 0 (a tie takes class 0)
  loss.backward();
  CHECK(predictor->param("W").grad().defined());

  L::Classifier no_accuracy(predictor, [](const Variable& a, const Variable& b) { return F::mean_squared_error(a, b); },
                            nullptr);
  const Variable target(Array::zeros({4, 2}));
  expect_close(no_accuracy(x, target).data(), F::mean_squared_error(y, target).data());
  CHECK_FALSE(no_accuracy.last_accuracy().defined());
  expect_error<ValueError>([] { L::Classifier(nullptr); }, {"predictor", "null"});
}

TEST_CASE("Classifier reports main/loss and main/accuracy as Chainer's does, and nothing without a scope") {
  auto predictor = std::make_shared<L::Linear>(L::LinearOptions(2, 2).initial_w(init::Zero()));
  predictor->param("W").data().assign(Array::from_vector<float>({1, 0, 0, 1}, {2, 2}));
  L::Classifier model(predictor);
  const Variable x(Array::from_vector<float>({3, 0, 0, 3, 0, 1}, {3, 2}));
  const Variable t(Array::from_vector<int32_t>({0, 0, 1}, {3}));
  Observation seen;
  {
    auto scope = report_scope(seen);
    model(x, t);
  }
  REQUIRE(seen.size() == 2);
  CHECK(seen.at("main/loss") == doctest::Approx(model.last_loss().data().item<double>()));
  CHECK(seen.at("main/accuracy") == doctest::Approx(2.0 / 3));
  L::Classifier without_accuracy(predictor, L::default_loss, nullptr);
  Observation loss_only;
  {
    auto scope = report_scope(loss_only);
    without_accuracy(x, t);
  }
  CHECK(loss_only.count("main/loss") == 1);
  CHECK(loss_only.count("main/accuracy") == 0);
  model(x, t);  // no scope open: nothing is recorded anywhere, and nothing throws
  CHECK(seen.size() == 2);
}

TEST_CASE("a copied Classifier has its own predictor") {
  auto predictor = std::make_shared<L::Linear>(2, 2);
  L::Classifier model(predictor);
  auto copied = std::dynamic_pointer_cast<L::Classifier>(model.copy());
  REQUIRE(copied);
  CHECK(copied->predictor() != predictor);
  CHECK(copied->child<L::Linear>("predictor") == copied->predictor());
  copied->predictor()->param("W").data().fill(3.0);
  CHECK(predictor->param("W").data().to_vector<double>()[0] != 3.0);
}
