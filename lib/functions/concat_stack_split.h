#pragma once
// Joining variables along an axis and splitting one variable into parts along an axis.

#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// The variables joined along an existing axis (Chainer's default is axis 1); all other extents must match.
KUSARI_API Variable concat(const std::vector<Variable>& xs, int64_t axis = 1);
// Variables of one shape joined along a new axis inserted at `axis`.
KUSARI_API Variable stack(const std::vector<Variable>& xs, int64_t axis = 0);
// x cut into `sections` equal parts along `axis`; sections must divide the extent.
KUSARI_API std::vector<Variable> split_axis(const Variable& x, int64_t sections, int64_t axis);
// x cut along `axis` before each of the non-decreasing `indices` (indices.size() + 1 parts). A braced
// single value such as {2} selects the sections overload; write std::vector<int64_t>{2} for one index.
KUSARI_API std::vector<Variable> split_axis(const Variable& x, const std::vector<int64_t>& indices, int64_t axis);

}  // namespace kusari::functions
