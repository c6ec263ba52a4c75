#include <kusari/data/image.h>

#include <algorithm>
#include <cmath>

#include <kusari/core/error.h>

namespace kusari::data {
namespace {

// Where output position i samples the input along one axis: the two neighbours and the weight of the second.
struct Tap {
  int64_t lo = 0;
  int64_t hi = 0;
  float weight = 0;
};

std::vector<Tap> taps(int64_t in, int64_t out) {
  std::vector<Tap> result(static_cast<size_t>(out));
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  for (int64_t i = 0; i < out; ++i) {
    const double source = std::clamp((static_cast<double>(i) + 0.5) * scale - 0.5, 0.0, static_cast<double>(in - 1));
    const auto lo = static_cast<int64_t>(source);
    const auto weight = static_cast<float>(source - static_cast<double>(lo));
    result[static_cast<size_t>(i)] = {lo, std::min(lo + 1, in - 1), weight};
  }
  return result;
}

}  // namespace

void check_image_dimensions(int64_t height, int64_t width, const std::string& name) {
  if (height <= 0 || width <= 0 || height > kMaxImagePixels / width) {
    throw IOError(cat(name, ": expected an image of 1 to ", kMaxImagePixels, " pixels, the header says ", height,
                      " x ", width));
  }
}

Image resize_bilinear(const Image& image, int64_t height, int64_t width) {
  if (height <= 0 || width <= 0 || image.height <= 0 || image.width <= 0) {
    throw ValueError(cat("resize_bilinear: expected positive sizes, got an image of ", image.height, " x ",
                         image.width, " resized to ", height, " x ", width));
  }
  if (height == image.height && width == image.width) return image;
  const std::vector<Tap> rows = taps(image.height, height), cols = taps(image.width, width);
  Image out{height, width, std::vector<uint8_t>(static_cast<size_t>(height * width * 3))};
  uint8_t* dst = out.pixels.data();
  for (const Tap& r : rows) {
    for (const Tap& c : cols) {
      for (int64_t ch = 0; ch < 3; ++ch) {
        const float top = image.at(r.lo, c.lo, ch) + c.weight * (image.at(r.lo, c.hi, ch) - image.at(r.lo, c.lo, ch));
        const float bottom =
            image.at(r.hi, c.lo, ch) + c.weight * (image.at(r.hi, c.hi, ch) - image.at(r.hi, c.lo, ch));
        *dst++ = static_cast<uint8_t>(std::lround(top + r.weight * (bottom - top)));
      }
    }
  }
  return out;
}

}  // namespace kusari::data
