#pragma once
// CMYK to RGB without a colour profile (the naive conversion PIL and browsers use for CMYK JPEGs).

#include <cstdint>
#include <vector>

#include <kusari/core/api.h>

namespace kusari::data {

// Interleaved C, M, Y, K bytes to interleaved R, G, B: R = (255 - C)(255 - K) / 255 for plain values,
// R = C K / 255 for `inverted` ones (Adobe's files store 255 - ink).
KUSARI_API std::vector<uint8_t> cmyk_to_rgb(const std::vector<uint8_t>& cmyk, bool inverted);

}  // namespace kusari::data
