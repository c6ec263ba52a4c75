#pragma once
// Functions that inject noise while training.

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// In training mode (config().train), zeroes each element with probability `ratio` and scales the others
// by 1 / (1 - ratio); the mask comes from default_generator(), which advances by x.size(). Outside
// training mode it returns x. Throws ValueError unless 0 <= ratio < 1.
KUSARI_API Variable dropout(const Variable& x, double ratio = 0.5);

}  // namespace kusari::functions
