#pragma once
// Internal to lib/functions: a differentiable sum over chosen axes and its adjoint, the broadcast back
// along them (used for bias gradients and global pooling).

#include <vector>

#include <kusari/autograd/variable.h>

namespace kusari::functions::detail {

// x summed over `axes` (sorted, distinct, in range), which are dropped from the shape.
Variable sum_axes(const Variable& x, const std::vector<int64_t>& axes);
// x, whose shape is `shape` without `axes`, repeated along those axes to `shape`.
Variable broadcast_axes(const Variable& x, const std::vector<int64_t>& axes, const Shape& shape);

}  // namespace kusari::functions::detail
