#pragma once
// PNG decoding through libpng (ImageNet's training set holds a PNG named .JPEG).

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/data/image.h>

namespace kusari::data {

// True when `bytes` start with the 8-byte PNG signature.
KUSARI_API bool is_png(const std::vector<uint8_t>& bytes);
// Decodes PNG bytes of any libpng colour type and depth (gray, gray + alpha, palette, RGB, RGBA; 1 to 16
// bits) to 8-bit RGB, dropping alpha; throws IOError naming `name` when the data is not a readable PNG.
KUSARI_API Image decode_png(const std::vector<uint8_t>& bytes, const std::string& name);
// The height and width in a PNG's IHDR chunk (the first 24 bytes); throws IOError naming `name`
// when they are missing.
KUSARI_API std::pair<int64_t, int64_t> png_size(const std::vector<uint8_t>& bytes, const std::string& name);

}  // namespace kusari::data
