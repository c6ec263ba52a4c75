#pragma once
// One entry point for the image files of data sets: JPEG or PNG, told apart by their signature.

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/data/image.h>

namespace kusari::data {

// The height and width of an image before decoding.
struct KUSARI_API ImageSize {
  int64_t height = 0;  // rows
  int64_t width = 0;   // columns
};

// Decodes JPEG or PNG bytes (whatever the file name says) to RGB. A JPEG is decoded at the smallest
// TurboJPEG scale that keeps at least min_height x min_width pixels (0 x 0: full size; see
// decode_jpeg); a PNG always at full size. Throws IOError naming `name` for any other data.
KUSARI_API Image decode_image(const std::vector<uint8_t>& bytes, const std::string& name, int64_t min_height = 0,
                              int64_t min_width = 0);
// The factor by which decode_image(bytes, name, min_height, min_width) scales an image of `size`:
// the JPEG scaling factor, exactly (the last row and column of a scaled JPEG cover less), or 1.
KUSARI_API double decode_factor(const std::vector<uint8_t>& bytes, ImageSize size, int64_t min_height, int64_t min_width);
// Reads and decodes an image file at full size.
KUSARI_API Image read_image(const std::string& path);
// The full-size height and width from the header in `bytes`; throws IOError naming `name` when the
// bytes are not a JPEG or PNG or end before the size.
KUSARI_API ImageSize image_size(const std::vector<uint8_t>& bytes, const std::string& name);
// image_size of a file, reading only its first bytes (more when a JPEG's metadata is long).
KUSARI_API ImageSize read_image_size(const std::string& path);

}  // namespace kusari::data
