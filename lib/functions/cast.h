#pragma once
// Conversion of a variable to another dtype.

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// x converted to `dtype` (x itself when it already has it); backward casts the gradient back to x's dtype.
KUSARI_API Variable cast(const Variable& x, Dtype dtype);

}  // namespace kusari::functions
