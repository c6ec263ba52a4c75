#pragma once
// JPEG decoding to the Y, Cb and Cr planes as stored (TurboJPEG without upsampling or colour
// conversion), for samplers that convert only the pixels they keep.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>

namespace kusari::data {

// One component plane of a decoded JPEG.
struct KUSARI_API Plane {
  int64_t height = 0;           // rows
  int64_t width = 0;            // columns (also the row stride)
  double factor_y = 1;          // rows per luma row (1/2 for 4:2:0 chroma)
  double factor_x = 1;          // columns per luma column
  std::vector<uint8_t> pixels;  // height * width bytes
};

// A JPEG decoded to planes: Y, and Cb and Cr unless the file is grayscale.
struct KUSARI_API JpegPlanes {
  int64_t height = 0;           // luma rows of the (scaled) image
  int64_t width = 0;            // luma columns
  double scale = 1;             // the TurboJPEG scaling factor used
  std::vector<Plane> planes;    // 1 (gray) or 3 (Y, Cb, Cr)
};

// Decodes a YCbCr or grayscale JPEG to its planes at the scale decode_jpeg would use for
// (min_height, min_width); returns an empty result (no planes) for other colour spaces (RGB, CMYK,
// YCCK), which callers decode to RGB instead. Throws IOError naming `name` as decode_jpeg does.
KUSARI_API JpegPlanes decode_jpeg_planes(const std::vector<uint8_t>& bytes, const std::string& name, int64_t min_height,
                                         int64_t min_width);
// The same into `out`, reusing its buffers (a per-thread JpegPlanes saves clearing ~300 KB an image);
// false, with `out` holding no planes, for colour spaces other than YCbCr and gray.
KUSARI_API bool decode_jpeg_planes(const std::vector<uint8_t>& bytes, const std::string& name, int64_t min_height,
                                   int64_t min_width, JpegPlanes& out);

}  // namespace kusari::data
