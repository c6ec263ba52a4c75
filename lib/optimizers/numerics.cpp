#include <kusari/optimizers/numerics.h>

#include <kusari/kernels/optimizer_routines.h>
#include <kusari/kernels/routines.h>

namespace kusari::optimizers {

Dtype accumulation_dtype(Dtype dtype) { return dtype == Dtype::float64 ? Dtype::float64 : Dtype::float32; }

Array sum_of_squares(const Array& a) { return ops::sum(ops::square(a.astype(accumulation_dtype(a.dtype())))); }

Array l2_norm(const Array& a) { return ops::sqrt(sum_of_squares(a)); }

Array both_positive(const Array& a, const Array& b) {
  const Array smaller = ops::minimum(a, b);
  return ops::greater(smaller, ops::scalar_like(0.0, smaller));
}

bool all_finite(const std::vector<Array>& arrays) { return ops::all_finite(arrays).item<bool>(); }

}  // namespace kusari::optimizers
