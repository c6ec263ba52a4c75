#pragma once
// ChannelGate: which elements the per-channel routines of batch normalization keep.

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

// Keeps the elements of a routine's first operand where scale[c]·input + shift[c] is not <= 0 (NaN is
// kept) and zeroes the rest, with input shaped like the routine's (N, C, ...) operands and scale, shift
// of shape (C,); an undefined input keeps every element. This is the derivative of a ReLU after a
// per-channel affine map, recomputed from the map's input instead of stored.
struct KUSARI_API ChannelGate {
  Array input, scale, shift;
};

}  // namespace kusari
