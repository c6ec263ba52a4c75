#include <kusari/optimizers/numerics.h>

#include <cmath>

#include <kusari/kernels/routines.h>

namespace kusari::optimizers {

Dtype accumulation_dtype(Dtype dtype) { return dtype == Dtype::float64 ? Dtype::float64 : Dtype::float32; }

Array sum_of_squares(const Array& a) { return ops::sum(ops::square(a.astype(accumulation_dtype(a.dtype())))); }

Array l2_norm(const Array& a) { return ops::sqrt(sum_of_squares(a)); }

Array both_positive(const Array& a, const Array& b) {
  const Array smaller = ops::minimum(a, b);
  return ops::greater(smaller, ops::scalar_like(0.0, smaller));
}

bool all_finite(const std::vector<Array>& arrays) {
  // x * 0 is 0 for finite x and NaN for inf or NaN, so one sum answers for every element.
  Array total;
  for (const Array& a : arrays) {
    const Array wide = a.astype(accumulation_dtype(a.dtype()));
    const Array poisoned = ops::sum(ops::mul(wide, ops::scalar_like(0.0, wide))).astype(Dtype::float64);
    total = total.defined() ? ops::add(total, poisoned) : poisoned;
  }
  return !total.defined() || std::isfinite(total.item<double>());
}

}  // namespace kusari::optimizers
