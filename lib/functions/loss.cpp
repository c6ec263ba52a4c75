#include <kusari/functions/loss.h>

#include <algorithm>

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

// Throws IndexError for the first label outside [0, classes) that is not ignore_label; returns how
// many samples are not ignored.
int64_t count_valid_labels(const Array& t, int64_t classes, int64_t ignore_label, const char* op) {
  int64_t valid = 0;
  const std::vector<int64_t> labels = t.to_vector<int64_t>();
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == ignore_label) continue;
    if (labels[i] < 0 || labels[i] >= classes) {
      throw IndexError(cat(op, ": label ", labels[i], " of sample ", i, " is outside [0, ", classes,
                           ") for C = ", classes, " classes"));
    }
    ++valid;
  }
  return valid;
}

// The (N, C) target distribution in like's dtype: (1 - ε) one_hot(t) + ε / C, zero on ignored rows.
Array target_distribution(const Array& t, int64_t classes, const SoftmaxCrossEntropyOptions& options,
                          const Array& like) {
  const int64_t n = t.shape()[0];
  const Array labels = t.astype(Dtype::int64).reshape(Shape{n, 1});
  const Array class_ids = Array::arange(0, static_cast<double>(classes), 1, Dtype::int64, t.device());
  const Array one_hot = ops::equal(labels, class_ids.reshape(Shape{1, classes}));
  const Array counted =
      ops::not_equal(labels, Array::scalar(static_cast<double>(options.ignore_label), Dtype::int64, t.device()));
  const double uniform = options.label_smoothing / static_cast<double>(classes);
  const Array smoothed = ops::where(one_hot, ops::scalar_like(1 - options.label_smoothing + uniform, like),
                                    ops::scalar_like(uniform, like));
  return ops::where(counted, smoothed, ops::scalar_like(0, like));
}

}  // namespace

Variable softmax_cross_entropy(const Variable& x, const Variable& t, const SoftmaxCrossEntropyOptions& options) {
  const char* op = "softmax_cross_entropy";
  const int64_t classes = check_classification_inputs(x, t, op);
  if (!(options.label_smoothing >= 0 && options.label_smoothing <= 1)) {
    throw ValueError(cat(op, ": expected label_smoothing in [0, 1], got ", options.label_smoothing));
  }
  const int64_t valid = count_valid_labels(t.data(), classes, options.ignore_label, op);
  const Variable target(target_distribution(t.data(), classes, options, x.data()), false);
  const Variable weighted = mul(target, log_softmax(x, 1));
  const int64_t n = x.shape()[0];
  if (options.reduce == Reduction::none) return neg(reshape(sum_to(weighted, Shape{n, 1}), Shape{n}));
  return sum_to(weighted, Shape{}) * (-1.0 / static_cast<double>(std::max<int64_t>(valid, 1)));
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
