#include <kusari/data/image_sampler.h>

#include <algorithm>
#include <vector>

namespace kusari::data {
namespace {

// Where output position i samples the input along one axis: byte offsets of the two neighbours
// (`stride` bytes apart per position) and the weight of the second.
struct Taps {
  std::vector<int64_t> lo, hi;
  std::vector<float> weight;
};

Taps axis_taps(double start, double length, int64_t out, int64_t in, int64_t stride, bool mirror) {
  Taps taps{std::vector<int64_t>(static_cast<size_t>(out)), std::vector<int64_t>(static_cast<size_t>(out)),
            std::vector<float>(static_cast<size_t>(out))};
  const double step = length / static_cast<double>(out);
  for (int64_t i = 0; i < out; ++i) {
    const double source = std::clamp(start + (static_cast<double>(i) + 0.5) * step - 0.5, 0.0,
                                     static_cast<double>(in - 1));
    const auto lo = static_cast<int64_t>(source);
    const auto k = static_cast<size_t>(mirror ? out - 1 - i : i);
    taps.lo[k] = lo * stride;
    taps.hi[k] = std::min(lo + 1, in - 1) * stride;
    taps.weight[k] = static_cast<float>(source - static_cast<double>(lo));
  }
  return taps;
}

// Per-channel multipliers and offsets taking a byte value v to (v / 255 - mean) / stddev.
struct Normaliser {
  float scale[3];
  float shift[3];
  explicit Normaliser(const ImageOptions& options) {
    for (size_t c = 0; c < 3; ++c) {
      scale[c] = 1.0f / (255.0f * options.stddev[c]);
      shift[c] = options.mean[c] / options.stddev[c];
    }
  }
};

// One output row: samples between source rows r0 and r1 (weight wy of r1) into the channel planes.
void sample_row(const uint8_t* r0, const uint8_t* r1, float wy, const Taps& cols, const Normaliser& n,
                int64_t channels, float* const* planes, int64_t width) {
  for (int64_t x = 0; x < width; ++x) {
    const auto i = static_cast<size_t>(x);
    const uint8_t *a = r0 + cols.lo[i], *b = r0 + cols.hi[i], *c = r1 + cols.lo[i], *d = r1 + cols.hi[i];
    const float wx = cols.weight[i];
    float v[3];
    for (int ch = 0; ch < 3; ++ch) {
      const float top = static_cast<float>(a[ch]) + wx * static_cast<float>(b[ch] - a[ch]);
      const float bottom = static_cast<float>(c[ch]) + wx * static_cast<float>(d[ch] - c[ch]);
      v[ch] = top + wy * (bottom - top);
    }
    if (channels == 1) {
      planes[0][x] = (0.299f * v[0] + 0.587f * v[1] + 0.114f * v[2]) * n.scale[0] - n.shift[0];
    } else {
      for (int ch = 0; ch < 3; ++ch) planes[ch][x] = v[ch] * n.scale[ch] - n.shift[ch];
    }
  }
}

}  // namespace

Array sample_region(const Image& image, const Region& region, int64_t out_height, int64_t out_width, bool mirror,
                    const ImageOptions& options) {
  const Taps rows = axis_taps(region.top, region.height, out_height, image.height, image.width * 3, false);
  const Taps cols = axis_taps(region.left, region.width, out_width, image.width, 3, mirror);
  const Normaliser normaliser(options);
  Array out = Array::empty({options.channels, out_height, out_width}, Dtype::float32);
  float* base = out.data<float>();
  const int64_t plane = out_height * out_width;
  for (int64_t y = 0; y < out_height; ++y) {
    const auto i = static_cast<size_t>(y);
    float* row = base + y * out_width;
    float* planes[3] = {row, options.channels == 3 ? row + plane : row, options.channels == 3 ? row + 2 * plane : row};
    sample_row(image.pixels.data() + rows.lo[i], image.pixels.data() + rows.hi[i], rows.weight[i], cols, normaliser,
               options.channels, planes, out_width);
  }
  return out;
}

}  // namespace kusari::data
