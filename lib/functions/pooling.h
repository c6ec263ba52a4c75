#pragma once
// Spatial pooling over NCHW arrays, with Chainer's semantics.

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>
#include <kusari/functions/window_2d.h>

namespace kusari::functions {

// The maximum of every ksize window of x (N, C, H, W), windows `ksize` apart and cover_all on.
KUSARI_API Variable max_pooling_2d(const Variable& x, Int2 ksize);
// The maximum of every ksize window of x padded by `pad` (padding never wins), windows `stride` apart;
// cover_all adds a last window where the stride would leave input elements uncovered. The gradient goes
// to each window's maximum.
KUSARI_API Variable max_pooling_2d(const Variable& x, Int2 ksize, Int2 stride, Int2 pad = 0, bool cover_all = true);

// The mean of every ksize window of x (N, C, H, W), windows `ksize` apart.
KUSARI_API Variable average_pooling_2d(const Variable& x, Int2 ksize);
// The sum of every ksize window of x zero-padded by `pad`, windows `stride` apart, divided by
// ksize.h * ksize.w (padding counts in the divisor, as in Chainer).
KUSARI_API Variable average_pooling_2d(const Variable& x, Int2 ksize, Int2 stride, Int2 pad = 0);

// The mean of x (N, C, H, W) over H and W, of shape (N, C).
KUSARI_API Variable global_average_pooling_2d(const Variable& x);

}  // namespace kusari::functions
