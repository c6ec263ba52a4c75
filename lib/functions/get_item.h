#pragma once
// Basic indexing of a variable.

#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// x selected by basic indexing (integers, slices, new axes, one ellipsis), as a view; backward places
// the gradient into zeros of x's shape.
KUSARI_API Variable get_item(const Variable& x, const std::vector<Index>& index);

}  // namespace kusari::functions
