#pragma once
// Elementwise mathematical functions.

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// e^x.
KUSARI_API Variable exp(const Variable& x);
// Natural logarithm.
KUSARI_API Variable log(const Variable& x);
// Square root.
KUSARI_API Variable sqrt(const Variable& x);
// x * x.
KUSARI_API Variable square(const Variable& x);
// |x| (gradient sign(x), 0 at 0).
KUSARI_API Variable abs(const Variable& x);
// Elementwise larger value with broadcasting; the gradient goes to a where a >= b, else to b.
KUSARI_API Variable maximum(const Variable& a, const Variable& b);
// Elementwise smaller value with broadcasting; the gradient goes to a where a <= b, else to b.
KUSARI_API Variable minimum(const Variable& a, const Variable& b);

}  // namespace kusari::functions
