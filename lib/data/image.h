#pragma once
// Image: decoded 8-bit RGB pixels on the host, and bilinear resizing.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>

namespace kusari::data {

// The most pixels a decoder accepts (268 Mpixels, 805 MB of RGB): a header claiming more is taken for
// corrupt and refused with IOError before anything is allocated.
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 28;

// Throws IOError naming `name` unless height x width is positive and at most kMaxImagePixels.
KUSARI_API void check_image_dimensions(int64_t height, int64_t width, const std::string& name);

// An 8-bit RGB image, rows top to bottom, pixels interleaved R, G, B.
struct KUSARI_API Image {
  int64_t height = 0;            // rows
  int64_t width = 0;             // columns
  std::vector<uint8_t> pixels;   // height * width * 3 bytes

  // The byte of channel c at (y, x).
  uint8_t at(int64_t y, int64_t x, int64_t c) const { return pixels[static_cast<size_t>((y * width + x) * 3 + c)]; }
};

// `image` resampled to height x width by bilinear interpolation with pixel centres aligned (the
// convention of OpenCV's INTER_LINEAR and PyTorch's align_corners=false); throws ValueError on a
// non-positive size.
KUSARI_API Image resize_bilinear(const Image& image, int64_t height, int64_t width);

}  // namespace kusari::data
