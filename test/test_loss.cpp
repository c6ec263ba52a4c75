#include <cmath>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/layer_routines.h>
#include <kusari/kernels/ops/loss.h>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

// The 2x3 logits the hand-computed values below refer to (numpy, float64).
Variable logits() { return Variable(Array::from_vector<double>({1, 2, 3, 0.5, -1, 2}, {2, 3})); }

Variable labels(const std::vector<int64_t>& values, Dtype dtype = Dtype::int32) {
  return Variable(Array::from_vector(values, {static_cast<int64_t>(values.size())}, dtype), false);
}

gradient_check::Function cross_entropy_with(F::SoftmaxCrossEntropyOptions options) {
  return [options](const std::vector<Variable>& v) {
    return std::vector<Variable>{F::softmax_cross_entropy(v[0], v[1], options)};
  };
}

}  // namespace

TEST_CASE("softmax_cross_entropy matches hand-computed values") {
  // log_softmax rows: [-2.40761, -1.40761, -0.40761] and [-1.74131, -3.24131, -0.24131].
  for (Dtype label_dtype : {Dtype::int32, Dtype::int64}) {
    INFO("labels ", label_dtype);
    const Variable t = labels({2, 0}, label_dtype);
    expect_values(F::softmax_cross_entropy(logits(), t).data(), {1.0744586305507688}, 1e-12);
    expect_values(F::softmax_cross_entropy(logits(), t, {.reduce = F::Reduction::none}).data(),
                  {0.40760596444438035, 1.7413112966571571}, 1e-12);
  }
}

TEST_CASE("softmax_cross_entropy's gradient of the mean is (softmax - one_hot) / N") {
  Variable x = logits();
  F::softmax_cross_entropy(x, labels({2, 0})).backward();
  expect_values(x.grad(), {0.04501528658519022, 0.12236423552739883, -0.16737952211258905, -0.4123548039299817,
                           0.01955628663534372, 0.39279851729463794}, 1e-12);
}

TEST_CASE("softmax_cross_entropy ignores samples labelled ignore_label, also in the mean") {
  expect_values(F::softmax_cross_entropy(logits(), labels({2, -1})).data(), {0.40760596444438035}, 1e-12);
  expect_values(F::softmax_cross_entropy(logits(), labels({2, 7}), {.ignore_label = 7}).data(),
                {0.40760596444438035}, 1e-12);
  expect_values(F::softmax_cross_entropy(logits(), labels({-1, 0}), {.reduce = F::Reduction::none}).data(),
                {0, 1.7413112966571571}, 1e-12);
  Variable x = logits();
  const Variable none_counted = F::softmax_cross_entropy(x, labels({-1, -1}));
  expect_values(none_counted.data(), {0});
  none_counted.backward();
  expect_values(x.grad(), {0, 0, 0, 0, 0, 0});
}

TEST_CASE("label smoothing mixes the one-hot target with the uniform distribution") {
  // Per sample: -(1 - 0.1) log p_t - 0.1 / 3 * sum_c log p_c, for t = (2, 1).
  const F::SoftmaxCrossEntropyOptions smoothing{.label_smoothing = 0.1};
  expect_values(F::softmax_cross_entropy(logits(), labels({2, 1}), smoothing).data(), {1.799458630550769}, 1e-12);
  expect_values(
      F::softmax_cross_entropy(logits(), labels({2, 1}), {.label_smoothing = 0.1, .reduce = F::Reduction::none})
          .data(),
      {0.5076059644443804, 3.091311296657157}, 1e-12);
}

TEST_CASE("softmax_cross_entropy stays finite for large logits") {
  const Variable x(Array::from_vector<double>({1000, 0, -1000}, {1, 3}, Dtype::float32));
  expect_values(F::softmax_cross_entropy(x, labels({0})).data(), {0});
  expect_values(F::softmax_cross_entropy(x, labels({2})).data(), {2000});
  expect_values(F::softmax_cross_entropy(x, labels({1}), {.label_smoothing = 0.3}).data(),
                {0.7 * 1000 + 0.1 * 3000}, 1e-3);
}

TEST_CASE("softmax_cross_entropy matches finite differences in x, twice") {
  const Array x = random({4, 3}, 1, Dtype::float64, -2, 2);
  const Array t = Array::from_vector<int64_t>({0, 2, -1, 1}, {4});
  check_gradients(cross_entropy_with({}), {x, t});
  check_gradients(cross_entropy_with({.reduce = F::Reduction::none}), {x, t});
  check_gradients(cross_entropy_with({.label_smoothing = 0.2}), {x, t.astype(Dtype::int32)});
  check_forward_dtypes(cross_entropy_with({}), {x, t}, 2);
  check_forward_dtypes(cross_entropy_with({.label_smoothing = 0.2, .reduce = F::Reduction::none}), {x, t}, 2);
}

TEST_CASE("softmax_cross_entropy rejects bad labels, shapes, dtypes and options") {
  const Variable x = logits();
  // A GPU checks labels on the device and raises at the next synchronization: the loss's copy to the host.
  expect_error<IndexError>([&] { F::softmax_cross_entropy(x, labels({2, 3})).data().to(Device::cpu()); },
                           {"label 3", "C = 3"});
  expect_error<IndexError>([&] { F::softmax_cross_entropy(x, labels({-2, 0})).data().to(Device::cpu()); },
                           {"label -2", "C = 3"});
  expect_error<ShapeError>([&] { F::softmax_cross_entropy(x, labels({0, 1, 2})); },
                           {"softmax_cross_entropy", "(2, 3)", "(3,)"});
  expect_error<ShapeError>([&] { F::softmax_cross_entropy(Variable(Array::zeros({6})), labels({0})); },
                           {"softmax_cross_entropy", "(6,)"});
  expect_error<DtypeError>([&] { F::softmax_cross_entropy(x, Variable(Array::zeros({2}))); },
                           {"softmax_cross_entropy", "int32 or int64", "float32"});
  const Variable int_logits(Array::zeros({2, 3}, Dtype::int64));
  expect_error<DtypeError>([&] { F::softmax_cross_entropy(int_logits, labels({0, 0})); },
                           {"softmax_cross_entropy", "floating", "int64"});
  expect_error<ValueError>([&] { F::softmax_cross_entropy(x, labels({0, 0}), {.label_smoothing = 1.5}); },
                           {"label_smoothing", "1.5"});
  // The gradient routine reads gy as the scores' dtype: another dtype is named, not read as wrong bits.
  const Array log_p = ops::softmax_cross_entropy(Array::zeros({2, 3}, Dtype::float32), labels({0, 1}).data(), {}).second;
  expect_error<DtypeError>(
      [&] { ops::softmax_cross_entropy_grad(log_p, labels({0, 1}).data(), Array::scalar(1.0, Dtype::float64), {}); },
      {"softmax_cross_entropy_grad", "float32", "float64"});
}

namespace {

// log_p, per-sample losses and the gradient for gy = 1 per sample, composed from array operations:
// the definitions the fused kernels must match.
struct ComposedCrossEntropy {
  Array log_p, loss, gx;
};

ComposedCrossEntropy composed_cross_entropy(const Array& x, const std::vector<int64_t>& labels, double smoothing,
                                            int64_t ignore_label) {
  const int64_t n = x.shape()[0], c = x.shape()[1];
  std::vector<double> target(static_cast<size_t>(n * c), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    if (labels[static_cast<size_t>(i)] == ignore_label) continue;
    for (int64_t j = 0; j < c; ++j) target[static_cast<size_t>(i * c + j)] = smoothing / static_cast<double>(c);
    target[static_cast<size_t>(i * c + labels[static_cast<size_t>(i)])] += 1 - smoothing;
  }
  const Array t = Array::from_vector(target, {n, c}, Dtype::float64);
  const Array x64 = x.astype(Dtype::float64);
  const Array shifted = ops::sub(x64, ops::amax(x64, {1}, true));
  const Array log_p = ops::sub(shifted, ops::log(ops::sum(ops::exp(shifted), {1}, true)));
  const Array loss = ops::neg(ops::sum(ops::mul(t, log_p), {1}));
  const Array gx = ops::sub(ops::mul(ops::exp(log_p), ops::sum(t, {1}, true)), t);
  return {log_p, loss, gx};
}

}  // namespace

TEST_CASE("the fused softmax cross-entropy kernels match the composed operations") {
  const DeviceScope host(Device::cpu());  // the CPU kernels themselves, on host arrays
  auto forward = kernel_for<kernel_ops::SoftmaxCrossEntropy>(Device::cpu());
  auto gradient = kernel_for<kernel_ops::SoftmaxCrossEntropyGrad>(Device::cpu());
  const std::vector<int64_t> labels{3, 0, 7, 4, 7, 1};
  for (Dtype dtype : {Dtype::float32, Dtype::float64}) {
    for (double smoothing : {0.0, 0.25}) {
      for (Dtype label_dtype : {Dtype::int32, Dtype::int64}) {
        INFO(dtype, " smoothing ", smoothing, " labels ", label_dtype);
        const double tol = dtype == Dtype::float32 ? 1e-5 : 1e-12;
        // Logits read through a transposed view, labels through a stepped one; 7 is ignored.
        const Array x = random({5, 6}, 21, dtype, -3, 3).transpose();
        std::vector<int64_t> stored;
        for (int64_t label : labels) stored.insert(stored.end(), {label, 99});
        const Array t = Array::from_vector(stored, {12}, label_dtype).get_item({Slice{std::nullopt, std::nullopt, 2}});
        const ComposedCrossEntropy expected = composed_cross_entropy(x, labels, smoothing, 7);
        const CrossEntropyTargets per_sample{.ignore_label = 7, .label_smoothing = smoothing, .mean = false};
        const Array log_p = Array::empty({6, 5}, dtype), loss = Array::empty({6}, dtype);
        forward(x, t, per_sample, log_p, loss);
        expect_close(log_p, expected.log_p, tol, tol);
        expect_close(loss, expected.loss, tol, tol);
        const Array gy = random({6}, 22, dtype);
        const Array gx = Array::empty({6, 5}, dtype);
        gradient(log_p, t, gy, per_sample, gx);
        expect_close(gx, ops::mul(expected.gx, gy.astype(Dtype::float64).reshape({6, 1})), tol, tol);

        const CrossEntropyTargets mean{.ignore_label = 7, .label_smoothing = smoothing, .mean = true};
        const Array mean_loss = Array::empty({}, dtype);
        forward(x, t, mean, log_p, mean_loss);
        expect_values(mean_loss, {ops::sum(expected.loss).item<double>() / 4}, tol);
        gradient(log_p, t, Array::full({}, 2.0, dtype), mean, gx);
        expect_close(gx, ops::mul(expected.gx, Array::scalar(2.0 / 4, Dtype::float64)), tol, tol);
      }
    }
  }
}

TEST_CASE("the fused softmax cross-entropy kernels: every label ignored, and bad labels") {
  const DeviceScope host(Device::cpu());  // the CPU kernels themselves, on host arrays
  auto forward = kernel_for<kernel_ops::SoftmaxCrossEntropy>(Device::cpu());
  auto gradient = kernel_for<kernel_ops::SoftmaxCrossEntropyGrad>(Device::cpu());
  const Array x = random({2, 3}, 23);
  const Array log_p = Array::empty({2, 3}, Dtype::float64), loss = Array::empty({}, Dtype::float64);
  const Array ignored = Array::from_vector<int64_t>({-1, -1}, {2});
  forward(x, ignored, {}, log_p, loss);
  expect_values(loss, {0});
  const Array gx = Array::full({2, 3}, NAN, Dtype::float64);
  gradient(log_p, ignored, Array::scalar(1.0, Dtype::float64), {}, gx);
  expect_values(gx, std::vector<double>(6, 0));
  expect_error<IndexError>([&] { forward(x, Array::from_vector<int32_t>({0, 3}, {2}), {}, log_p, loss); },
                           {"softmax_cross_entropy", "label 3", "sample 1", "[0, 3)"});
  expect_error<IndexError>([&] { forward(x, Array::from_vector<int64_t>({-5, 0}, {2}), {}, log_p, loss); },
                           {"label -5", "sample 0"});
  expect_error<DtypeError>([&] { forward(x, Array::zeros({2}), {}, log_p, loss); }, {"int32 or int64", "float32"});
}

TEST_CASE("softmax_cross_entropy's backward under double backprop still differentiates through softmax") {
  Variable x(random({3, 4}, 24), true);
  const Variable t(Array::from_vector<int32_t>({1, -1, 3}, {3}), false);
  const std::vector<F::SoftmaxCrossEntropyOptions> variants{{}, {.label_smoothing = 0.3, .reduce = F::Reduction::none}};
  for (const F::SoftmaxCrossEntropyOptions& options : variants) {
    x.cleargrad();
    Variable loss = F::softmax_cross_entropy(x, t, options);
    if (options.reduce == F::Reduction::none) loss = F::sum(loss);
    backward({loss}, {}, {.enable_double_backprop = true});
    const Variable first = x.grad_var();
    CHECK(first.creator() != nullptr);
    // The differentiable gradient equals the kernel's.
    Variable fresh(x.data(), true);
    Variable again = F::softmax_cross_entropy(fresh, t, options);
    if (options.reduce == F::Reduction::none) again = F::sum(again);
    again.backward();
    expect_close(first.data(), fresh.grad(), 1e-12, 1e-12);
  }
}

TEST_CASE("mean_squared_error is the mean of the squared differences") {
  const Variable a(Array::from_vector<double>({1, 2, 3, 4}, {2, 2}));
  const Variable b(Array::from_vector<double>({0.5, 2.5, 3, 6}, {2, 2}));
  expect_values(F::mean_squared_error(a, b).data(), {1.125});
  CHECK(F::mean_squared_error(a, b).ndim() == 0);
  const auto f = binary(F::mean_squared_error);
  check_gradients(f, {random({2, 3}, 2), random({2, 3}, 3)});
  check_forward_dtypes(f, {random({2, 3}, 2), random({2, 3}, 3)}, 2);
}

TEST_CASE("mean_squared_error names both shapes and dtypes") {
  const Variable a(Array::zeros({2, 3}));
  expect_error<ShapeError>([&] { F::mean_squared_error(a, Variable(Array::zeros({3}))); },
                           {"mean_squared_error", "(2, 3)", "(3,)"});
  expect_error<DtypeError>([&] { F::mean_squared_error(a, Variable(Array::zeros({2, 3}, Dtype::float64))); },
                           {"mean_squared_error", "float32", "float64"});
}

TEST_CASE("accuracy counts argmax hits, skipping ignored labels") {
  const Variable y(Array::from_vector<double>({0.1, 0.9, 0.0, 0.8, 0.1, 0.1, 0.2, 0.3, 0.5, 0.3, 0.3, 0.4}, {4, 3}));
  // argmax per row: 1, 0, 2, 2.
  const Variable acc = F::accuracy(y, labels({1, 2, 2, -1}));
  CHECK(acc.dtype() == Dtype::float64);
  CHECK(acc.ndim() == 0);
  CHECK_FALSE(acc.requires_grad());
  expect_values(acc.data(), {0.5});
  expect_values(F::accuracy(y, labels({1, 2, 2, -1}, Dtype::int64), -1).data(), {2.0 / 3});
  expect_values(F::accuracy(y, labels({-1, -1, -1, -1}), -1).data(), {0});
  const Variable y32(y.data().astype(Dtype::float16));
  CHECK(F::accuracy(y32, labels({1, 0, 2, 2})).dtype() == Dtype::float16);
  expect_values(F::accuracy(y32, labels({1, 0, 2, 2})).data(), {1});
}

TEST_CASE("top-k accuracy: k = 1 is the argmax accuracy, k = 5 by hand, ties, ignored labels, dtypes") {
  // k = 1 against argmax hits on random scores (no ties), labels in [0, 10).
  const Array scores = random({64, 10}, 71, Dtype::float32);
  const Array t = Array::uniform({64}, 0, 10, 72, Dtype::float32).astype(Dtype::int32);
  const Array argmax_hits = ops::equal(ops::argmax(scores, 1), t.astype(Dtype::int64));
  const double expected = ops::sum(argmax_hits).item<double>() / 64;
  expect_values(F::accuracy(Variable(scores), Variable(t)).data(), {expected}, 1e-6);
  expect_values(F::accuracy(Variable(scores), Variable(t), {}, 10).data(), {1});
  // k = 5 over 7 classes: the label's rank (classes scoring higher) is 0, 4, 5, 6 and 2.
  const Variable y(Array::from_vector<double>({7, 6, 5, 4, 3, 2, 1,    // label 0: rank 0
                                               7, 6, 5, 4, 3, 2, 1,    // label 4: rank 4
                                               1, 2, 3, 4, 5, 6, 7,    // label 1: rank 5
                                               1, 2, 3, 4, 5, 6, 7,    // label 0: rank 6
                                               0, 9, 0, 8, 7, 0, 0},   // label 4: rank 2
                                              {5, 7}));
  const Variable t5 = labels({0, 4, 1, 0, 4});
  expect_values(F::accuracy(y, t5, {}, 5).data(), {3.0 / 5});
  expect_values(F::accuracy(y, t5, {}, 6).data(), {4.0 / 5});
  expect_values(F::accuracy(y, t5, {}, 1).data(), {1.0 / 5});
  // Ties go to the lower class index, as argmax takes the first maximum.
  const Variable tied(Array::from_vector<double>({2, 2, 0, 1, 1, 1, 1, 0}, {2, 4}));
  expect_values(F::accuracy(tied, labels({0, 3}), {}, 1).data(), {0.5});  // row 0 hits: a tie goes to class 0
  expect_values(F::accuracy(tied, labels({1, 3}), {}, 1).data(), {0});    // ... so class 1 misses, as in argmax
  const Variable flat(Array::zeros({3, 4}, Dtype::float64));               // collapsed logits: chance, not 100%
  expect_values(F::accuracy(flat, labels({0, 1, 2}), {}, 1).data(), {1.0 / 3});
  expect_values(F::accuracy(tied, labels({3, 3}), {}, 2).data(), {0});    // two and three classes above
  expect_values(F::accuracy(tied, labels({3, 2}), {}, 3).data(), {1});    // two above; two outrank it
  // Ignored labels are not counted; other labels outside [0, C) are misses.
  expect_values(F::accuracy(y, labels({0, 4, -1, -1, 4}), -1, 5).data(), {1});
  expect_values(F::accuracy(y, labels({0, 4, 9, -1, 4}), -1, 5).data(), {3.0 / 4});
  // Every floating dtype, and extra axes: y (2, 3, 2) with k = 2.
  for (const Dtype dtype : {Dtype::float16, Dtype::bfloat16, Dtype::float32, Dtype::float64}) {
    INFO(dtype_name(dtype));
    const Variable cast(y.data().astype(dtype));
    CHECK(F::accuracy(cast, t5, {}, 5).dtype() == dtype);
    expect_values(F::accuracy(cast, t5, {}, 5).data(), {3.0 / 5}, 1e-2);
  }
  const Variable spatial(Array::from_vector<double>({0, 5, 1, 0, 2, 0, 0, 0, 1, 1, 0, 0}, {2, 3, 2}));
  const Variable t_spatial(Array::from_vector<int64_t>({0, 0, 0, 2}, {2, 2}), false);
  // Per (sample, position) the scores are (0, 1, 2) / (5, 0, 0) / (0, 1, 0) / (0, 1, 0): ranks 2, 0, 1 and
  // 2 (label 2 ties with class 0, which comes first).
  expect_values(F::accuracy(spatial, t_spatial, {}, 2).data(), {0.5});
}

TEST_CASE("top-k accuracy names a bad k and the class count") {
  const Variable y(Array::zeros({2, 3}));
  expect_error<ValueError>([&] { F::accuracy(y, labels({0, 1}), {}, 0); }, {"accuracy", "k = 0", "C = 3"});
  expect_error<ValueError>([&] { F::accuracy(y, labels({0, 1}), {}, 4); }, {"accuracy", "k = 4", "C = 3"});
}

TEST_CASE("accuracy handles extra axes and names bad shapes and dtypes") {
  // y (2, 3, 2): argmax over axis 1 gives [[2, 0], [1, 1]].
  const Variable y(Array::from_vector<double>({0, 5, 1, 0, 2, 0, 0, 0, 1, 1, 0, 0}, {2, 3, 2}));
  const Variable t(Array::from_vector<int64_t>({2, 0, 1, 0}, {2, 2}), false);
  expect_values(F::accuracy(y, t).data(), {0.75});
  expect_error<ShapeError>([&] { F::accuracy(y, labels({0, 1})); }, {"accuracy", "(2, 3, 2)", "(2,)"});
  expect_error<DtypeError>([&] { F::accuracy(y, Variable(Array::zeros({2, 2}))); }, {"accuracy", "float32"});
}
