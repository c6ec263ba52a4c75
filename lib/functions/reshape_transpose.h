#pragma once
// Functions that rearrange a variable's elements without changing them (so far: reshape).

#include <kusari/autograd/variable.h>

namespace kusari::functions {

// x with another shape of the same size (one extent may be -1); backward reshapes the gradient back.
Variable reshape(const Variable& x, const Shape& shape);

}  // namespace kusari::functions
