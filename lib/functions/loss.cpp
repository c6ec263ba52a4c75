#include <kusari/functions/loss.h>

#include <algorithm>
#include <utility>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/functions/activation.h>
#include <kusari/functions/arithmetic.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/math.h>
#include <kusari/functions/reshape_transpose.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// Throws unless x is (N, C) floating and t is (N,) int32/int64; returns C.
int64_t check_classification_inputs(const Variable& x, const Variable& t, const char* op) {
  require_floating(x, op);
  if (!t.defined()) throw ValueError(cat(op, ": the labels are undefined"));
  if (t.dtype() != Dtype::int32 && t.dtype() != Dtype::int64) {
    throw DtypeError(cat(op, ": expected labels of dtype int32 or int64, got ", t.dtype()));
  }
  if (x.ndim() != 2 || t.ndim() != 1 || t.shape()[0] != x.shape()[0]) {
    throw ShapeError(cat(op, ": expected x of shape (N, C) and t of shape (N,), got ", x.shape(), " and ", t.shape()));
  }
  return x.shape()[1];
}

// The (N, C) target distribution in like's dtype and on its device: (1 - ε) one_hot(t) + ε / C, zero on
// the rows of ignored samples. Throws IndexError for the first label outside [0, classes) that is not
// ignore_label. `valid` receives how many samples are not ignored.
Array target_distribution(const Array& t, int64_t classes, const SoftmaxCrossEntropyOptions& options,
                          const Array& like, int64_t& valid, const char* op) {
  const std::vector<int64_t> labels = t.to_vector<int64_t>();
  const double uniform = options.label_smoothing / static_cast<double>(classes);
  std::vector<double> target(labels.size() * static_cast<size_t>(classes), 0.0);
  valid = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == options.ignore_label) continue;
    if (labels[i] < 0 || labels[i] >= classes) {
      throw IndexError(cat(op, ": label ", labels[i], " of sample ", i, " is outside [0, ", classes,
                           ") for C = ", classes, " classes"));
    }
    ++valid;
    double* row = target.data() + i * static_cast<size_t>(classes);
    std::fill(row, row + classes, uniform);
    row[labels[i]] += 1 - options.label_smoothing;
  }
  return Array::from_vector(target, Shape{t.shape()[0], classes}, like.dtype(), like.device());
}

// Cross entropy against a fixed target distribution as one node. Forward keeps log softmax(x); backward
// is (Σ_c target) softmax(x) - target per sample (zero on ignored rows), times the loss's gradient.
class SoftmaxCrossEntropy final : public FunctionNode {
 public:
  // scale multiplies the summed loss under Reduction::mean (1 / the number of counted samples).
  SoftmaxCrossEntropy(Array target, Reduction reduce, double scale)
      : target_(std::move(target)), reduce_(reduce), scale_(scale) {}
  std::string label() const override { return "SoftmaxCrossEntropy"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0});
    const Array shifted = ops::sub(x[0], ops::amax(x[0], {1}, true));
    log_p_ = ops::sub(shifted, ops::log(ops::sum(ops::exp(shifted), {1}, true)));
    const Array per_sample = ops::neg(ops::sum(ops::mul(target_, log_p_), {1}));
    if (reduce_ == Reduction::none) return {per_sample};
    return {ops::mul(ops::sum(per_sample), ops::scalar_like(scale_, per_sample))};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Array mass = ops::sum(target_, {1}, true);
    if (!is_backprop_enabled()) {
      const Array gx = ops::sub(ops::mul(ops::exp(log_p_), mass), target_);
      return {Variable(ops::mul(gx, per_sample_gradient(gy[0].data())), false)};
    }
    const Variable p = softmax(get_retained_inputs()[0], 1);
    const Variable gx = sub(mul(p, Variable(mass, false)), Variable(target_, false));
    return {mul(gx, per_sample_gradient(gy[0]))};
  }

 private:
  // The loss's gradient as an (N, 1) or (1, 1) factor of each sample's row, with the mean's scale.
  Array per_sample_gradient(const Array& gy) const {
    if (reduce_ == Reduction::none) return gy.reshape(Shape{target_.shape()[0], 1});
    return ops::mul(gy, ops::scalar_like(scale_, gy)).reshape(Shape{1, 1});
  }
  // The same for the differentiable path.
  Variable per_sample_gradient(const Variable& gy) const {
    if (reduce_ == Reduction::none) return reshape(gy, Shape{target_.shape()[0], 1});
    return reshape(gy * scale_, Shape{1, 1});
  }

  Array target_;
  Reduction reduce_;
  double scale_;
  Array log_p_;
};

}  // namespace

Variable softmax_cross_entropy(const Variable& x, const Variable& t, const SoftmaxCrossEntropyOptions& options) {
  const char* op = "softmax_cross_entropy";
  const int64_t classes = check_classification_inputs(x, t, op);
  if (!(options.label_smoothing >= 0 && options.label_smoothing <= 1)) {
    throw ValueError(cat(op, ": expected label_smoothing in [0, 1], got ", options.label_smoothing));
  }
  int64_t valid = 0;
  Array target = target_distribution(t.data(), classes, options, x.data(), valid, op);
  const double scale = 1.0 / static_cast<double>(std::max<int64_t>(valid, 1));
  return apply_single<SoftmaxCrossEntropy>({x}, std::move(target), options.reduce, scale);
}

Variable mean_squared_error(const Variable& a, const Variable& b) {
  require_same_dtype_and_device(a, b, "mean_squared_error");
  require_floating(a, "mean_squared_error");
  if (a.shape() != b.shape()) {
    throw ShapeError(cat("mean_squared_error: expected operands of one shape, got ", a.shape(), " and ", b.shape()));
  }
  return sum_to(square(a - b), Shape{}) * (1.0 / static_cast<double>(a.size()));
}

}  // namespace kusari::functions
