#include <kusari/functions/evaluation.h>

#include <kusari/functions/function_helpers.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// Throws unless y is (N, C, ...) floating and t is (N, ...) integral.
void check_accuracy_inputs(const Variable& y, const Variable& t) {
  require_floating(y, "accuracy");
  if (!t.defined()) throw ValueError("accuracy: the labels are undefined");
  if (is_floating(t.dtype()) || t.dtype() == Dtype::bool_) {
    throw DtypeError(cat("accuracy: expected integer labels, got ", t.dtype()));
  }
  std::vector<int64_t> expected = y.shape().dims();
  if (y.ndim() >= 2) expected.erase(expected.begin() + 1);
  if (y.ndim() < 2 || t.shape() != Shape(expected)) {
    throw ShapeError(cat("accuracy: expected y of shape (N, C, ...) and t of y's shape without axis 1, got ", y.shape(),
                         " and ", t.shape()));
  }
}

// y's scores as (samples, C): y itself for (N, C), else axis 1 moved last and the rest flattened.
Array score_rows(const Array& y) {
  const int64_t classes = y.shape()[1];
  if (y.ndim() == 2) return y;
  std::vector<int64_t> axes{0};
  for (int64_t i = 2; i < y.ndim(); ++i) axes.push_back(i);
  axes.push_back(1);
  return y.transpose(axes).reshape(Shape{-1, classes});
}

}  // namespace

Variable accuracy(const Variable& y, const Variable& t, std::optional<int64_t> ignore_label, int64_t k) {
  check_accuracy_inputs(y, t);
  const int64_t classes = y.shape()[1];
  if (k < 1 || k > classes) {
    throw ValueError(cat("accuracy: expected 1 <= k <= C, got k = ", k, " for C = ", classes, " classes"));
  }
  const Array labels = t.data().astype(Dtype::int64);
  Array hits = ops::top_k_hits(score_rows(y.data()), labels.reshape(Shape{labels.size()}), k).reshape(labels.shape());
  Array counted = ops::scalar_like(static_cast<double>(labels.size()), labels);
  if (ignore_label) {
    const Array kept = ops::not_equal(labels, ops::scalar_like(static_cast<double>(*ignore_label), labels));
    hits = ops::where(kept, hits, ops::scalar_like(0, hits));
    counted = ops::sum(kept);
  }
  const Array total = ops::maximum(counted, ops::scalar_like(1, counted));
  return Variable(ops::div(ops::sum(hits).astype(y.dtype()), total.astype(y.dtype())), false);
}

}  // namespace kusari::functions
