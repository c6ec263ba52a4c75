#pragma once
// Broadcasting and its adjoint, the sum back to a smaller shape.

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// x repeated along new or unit axes to `shape` (NumPy rules); backward sums back.
KUSARI_API Variable broadcast_to(const Variable& x, const Shape& shape);
// x summed over the axes that broadcasting to x.shape() would have added or stretched, giving `shape`.
KUSARI_API Variable sum_to(const Variable& x, const Shape& shape);

}  // namespace kusari::functions
