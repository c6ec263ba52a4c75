#pragma once
// Elementwise mathematical functions.

#include <kusari/autograd/variable.h>

namespace kusari::functions {

// e^x.
Variable exp(const Variable& x);
// Natural logarithm.
Variable log(const Variable& x);
// Square root.
Variable sqrt(const Variable& x);
// x * x.
Variable square(const Variable& x);
// |x| (gradient sign(x), 0 at 0).
Variable abs(const Variable& x);
// Elementwise larger value with broadcasting; the gradient goes to a where a >= b, else to b.
Variable maximum(const Variable& a, const Variable& b);
// Elementwise smaller value with broadcasting; the gradient goes to a where a <= b, else to b.
Variable minimum(const Variable& a, const Variable& b);

}  // namespace kusari::functions
