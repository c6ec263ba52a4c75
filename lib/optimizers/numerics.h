#pragma once
// Norms and finiteness checks that optimizers and hooks compute on the arrays' own device; results
// stay 0-dimensional arrays so no value has to travel to the host until it is really needed.

#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari::optimizers {

// The dtype norms and sums of `dtype` are accumulated in: float64 for float64, float32 otherwise.
KUSARI_API Dtype accumulation_dtype(Dtype dtype);
// Σ a², as a 0-d array of accumulation_dtype(a.dtype()) (half inputs are widened first).
KUSARI_API Array sum_of_squares(const Array& a);
// ‖a‖₂, as a 0-d array of accumulation_dtype(a.dtype()).
KUSARI_API Array l2_norm(const Array& a);
// a > 0 and b > 0, as a bool array (the guard of trust ratios, which are 1 when a norm vanishes).
KUSARI_API Array both_positive(const Array& a, const Array& b);
// Whether no element of any array is inf or NaN (one host read for all arrays together).
KUSARI_API bool all_finite(const std::vector<Array>& arrays);

}  // namespace kusari::optimizers
