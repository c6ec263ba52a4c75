#pragma once
// Pairs of extents for the height and width axes, and the output extents of windows sliding over them
// (shared by the convolutions and the poolings).

#include <cstdint>
#include <iosfwd>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// One extent for the height axis and one for the width axis; a single value stands for both.
struct KUSARI_API Int2 {
  int64_t h = 0;
  int64_t w = 0;
  constexpr Int2() = default;
  // The same extent on both axes.
  constexpr Int2(int64_t both) : h(both), w(both) {}
  // Height and width extents.
  constexpr Int2(int64_t height, int64_t width) : h(height), w(width) {}
  bool operator==(const Int2&) const = default;
};

// Prints "(h, w)".
KUSARI_API std::ostream& operator<<(std::ostream& out, const Int2& pair);

// Output extent of a window of `kernel` taps, `dilation` apart, sliding by `stride` over `size` padded by
// `pad` on both sides (Chainer's get_conv_outsize); cover_all adds a last window when the stride would
// leave input elements uncovered. Zero when the dilated window exceeds the padded input.
KUSARI_API int64_t conv_outsize(int64_t size, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool cover_all);

// Output extent of the transposed convolution of `size` (Chainer's get_deconv_outsize): the smallest
// extent whose conv_outsize, with the same arguments, is `size`.
KUSARI_API int64_t deconv_outsize(int64_t size, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool cover_all);

// Throws ShapeError naming `op` unless `v` is a 4-axis (N, C, H, W) array called `name` in the message,
// and DtypeError unless its dtype is floating.
KUSARI_API void require_nchw(const Variable& v, const char* op, const char* name);

// Throws ValueError naming `op` and `what` unless both extents are at least `minimum`.
KUSARI_API void require_at_least(const Int2& pair, int64_t minimum, const char* op, const char* what);

}  // namespace kusari::functions
