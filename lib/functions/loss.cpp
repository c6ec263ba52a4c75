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
#include <kusari/kernels/layer_routines.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// Throws unless x is (N, C) floating and t is (N,) int32/int64.
void check_classification_inputs(const Variable& x, const Variable& t, const char* op) {
  require_floating(x, op);
  if (!t.defined()) throw ValueError(cat(op, ": the labels are undefined"));
  if (t.dtype() != Dtype::int32 && t.dtype() != Dtype::int64) {
    throw DtypeError(cat(op, ": expected labels of dtype int32 or int64, got ", t.dtype()));
  }
  if (x.ndim() != 2 || t.ndim() != 1 || t.shape()[0] != x.shape()[0]) {
    throw ShapeError(cat(op, ": expected x of shape (N, C) and t of shape (N,), got ", x.shape(), " and ", t.shape()));
  }
}

// The (N, C) target distribution in like's dtype and on its device: (1 - ε) one_hot(t) + ε / C, zero on
// the rows of ignored samples (whose labels the forward kernel has checked). `counted` receives how many
// samples are not ignored.
Array target_distribution(const Array& t, int64_t classes, const CrossEntropyTargets& targets, const Array& like,
                          int64_t& counted) {
  const std::vector<int64_t> labels = t.to_vector<int64_t>();
  const double uniform = targets.label_smoothing / static_cast<double>(classes);
  std::vector<double> target(labels.size() * static_cast<size_t>(classes), 0.0);
  counted = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == targets.ignore_label) continue;
    ++counted;
    double* row = target.data() + i * static_cast<size_t>(classes);
    std::fill(row, row + classes, uniform);
    row[labels[i]] += 1 - targets.label_smoothing;
  }
  return Array::from_vector(target, Shape{t.shape()[0], classes}, like.dtype(), like.device());
}

// Cross entropy against the labels' targets as one node, forward and backward one kernel each. Forward
// keeps log softmax(x); backward is softmax(x) - target per counted sample (zero on ignored rows), times
// the loss's gradient. Under double backprop, backward is built from differentiable functions instead.
class SoftmaxCrossEntropy final : public FunctionNode {
 public:
  SoftmaxCrossEntropy(Array labels, CrossEntropyTargets targets) : labels_(std::move(labels)), targets_(targets) {}
  std::string label() const override { return "SoftmaxCrossEntropy"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0});
    auto [loss, log_p] = ops::softmax_cross_entropy(x[0], labels_, targets_);
    log_p_ = std::move(log_p);
    return {loss};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    if (!is_backprop_enabled()) {
      return {Variable(ops::softmax_cross_entropy_grad(log_p_, labels_, gy[0].data(), targets_), false)};
    }
    int64_t counted = 0;
    const Array target = target_distribution(labels_, log_p_.shape()[1], targets_, log_p_, counted);
    const Variable p = softmax(get_retained_inputs()[0], 1);
    const Variable gx = sub(mul(p, Variable(ops::sum(target, {1}, true), false)), Variable(target, false));
    if (!targets_.mean) return {mul(gx, reshape(gy[0], Shape{log_p_.shape()[0], 1}))};
    return {mul(gx, reshape(gy[0] * (1.0 / static_cast<double>(std::max<int64_t>(counted, 1))), Shape{1, 1}))};
  }

 private:
  Array labels_;
  CrossEntropyTargets targets_;
  Array log_p_;
};

}  // namespace

Variable softmax_cross_entropy(const Variable& x, const Variable& t, const SoftmaxCrossEntropyOptions& options) {
  const char* op = "softmax_cross_entropy";
  check_classification_inputs(x, t, op);
  if (!(options.label_smoothing >= 0 && options.label_smoothing <= 1)) {
    throw ValueError(cat(op, ": expected label_smoothing in [0, 1], got ", options.label_smoothing));
  }
  const CrossEntropyTargets targets{.ignore_label = options.ignore_label,
                                    .label_smoothing = options.label_smoothing,
                                    .mean = options.reduce == Reduction::mean};
  return apply_single<SoftmaxCrossEntropy>({x}, t.data().to(x.device()), targets);
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
