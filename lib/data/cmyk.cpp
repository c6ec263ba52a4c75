#include <kusari/data/cmyk.h>

#include <cstddef>

namespace kusari::data {

std::vector<uint8_t> cmyk_to_rgb(const std::vector<uint8_t>& cmyk, bool inverted) {
  std::vector<uint8_t> rgb(cmyk.size() / 4 * 3);
  const int flip = inverted ? 0 : 255;  // x or 255 - x, as `flip ^ x`
  for (size_t i = 0, o = 0; i + 3 < cmyk.size(); i += 4, o += 3) {
    const int k = flip ^ cmyk[i + 3];
    for (size_t c = 0; c < 3; ++c) rgb[o + c] = static_cast<uint8_t>(((flip ^ cmyk[i + c]) * k + 127) / 255);
  }
  return rgb;
}

}  // namespace kusari::data
