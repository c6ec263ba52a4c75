// The evaluation routine of routines.h (top-k hits): argument checks, then one kernel call.

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/reduction.h>
#include <kusari/kernels/routines.h>

namespace kusari::ops {

Array top_k_hits(const Array& x, const Array& t, int64_t k) {
  const char* op = "top_k_hits";
  if (x.ndim() != 2 || t.shape() != Shape{x.shape()[0]}) {
    throw ShapeError(cat(op, ": expected scores (N, C) and labels (N,), got ", x.shape(), " and ", t.shape()));
  }
  if (!is_floating(x.dtype())) throw DtypeError(cat(op, ": expected floating scores, got ", x.dtype()));
  if (is_floating(t.dtype()) || t.dtype() == Dtype::bool_) {
    throw DtypeError(cat(op, ": expected integer labels, got ", t.dtype()));
  }
  const int64_t classes = x.shape()[1];
  if (k < 1 || k > classes) {
    throw ValueError(cat(op, ": expected 1 <= k <= C, got k = ", k, " for C = ", classes, " classes"));
  }
  const Array labels = t.to(x.device()).astype(Dtype::int64).contiguous();
  const Array hits = Array::empty(t.shape(), Dtype::bool_, x.device());
  kernel_for<kernel_ops::TopKHits>(x.device())(x, labels, k, hits);
  return hits;
}

}  // namespace kusari::ops
