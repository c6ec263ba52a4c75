#pragma once
// Functions that rearrange a variable's elements without changing them: reshape and its special cases,
// and transpose. Each forward is a view of the input whenever the layout allows one.

#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// x with another shape of the same size (one extent may be -1 and is then inferred).
KUSARI_API Variable reshape(const Variable& x, const Shape& shape);
// x as a 1-D variable.
KUSARI_API Variable flatten(const Variable& x);
// x without the given axes of extent 1 (every axis of extent 1 when `axes` is empty).
KUSARI_API Variable squeeze(const Variable& x, const std::vector<int64_t>& axes = {});
// x with a new axis of extent 1 at `axis` (in [-ndim - 1, ndim]).
KUSARI_API Variable expand_dims(const Variable& x, int64_t axis);
// x with its axes permuted: output axis i is input axis axes[i] (the reverse order when `axes` is empty).
KUSARI_API Variable transpose(const Variable& x, const std::vector<int64_t>& axes = {});

}  // namespace kusari::functions
