#include <kusari/data/random_resized_crop.h>

#include <algorithm>
#include <cmath>

#include <kusari/data/random_stream.h>

namespace kusari::data {
namespace {

constexpr int kTries = 10;
// The box draws use their own stream, so random_crop's and random_flip's draws stay as they were.
constexpr uint64_t kStream = 0x7272632d626f7821;  // "rrc-box!"
enum Draw : uint64_t { area, aspect, row, column, kDraws };

uint64_t counter(int64_t epoch, int attempt, Draw draw) {
  return (static_cast<uint64_t>(epoch) * kTries + static_cast<uint64_t>(attempt)) * kDraws + draw;
}

// A uniform double in [low, high).
double uniform(double low, double high, uint64_t seed, int64_t index, uint64_t count) {
  const double u = static_cast<double>(random_bits(seed, static_cast<uint64_t>(index), count) >> 11) * 0x1p-53;
  return low + (high - low) * u;
}

// The centred fallback: the whole image with its aspect clamped into the range.
CropBox fallback(int64_t height, int64_t width, const ImageOptions& options) {
  const double ratio = static_cast<double>(width) / static_cast<double>(height);
  int64_t h = height, w = width;
  if (ratio < options.aspect_range[0]) {
    h = std::max<int64_t>(1, std::llround(static_cast<double>(w) / options.aspect_range[0]));
  } else if (ratio > options.aspect_range[1]) {
    w = std::max<int64_t>(1, std::llround(static_cast<double>(h) * options.aspect_range[1]));
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

}  // namespace

CropBox random_resized_crop_box(int64_t height, int64_t width, const ImageOptions& options, int64_t index,
                                int64_t epoch) {
  const uint64_t seed = options.seed ^ kStream;
  const double total = static_cast<double>(height) * static_cast<double>(width);
  const double log_low = std::log(options.aspect_range[0]), log_high = std::log(options.aspect_range[1]);
  for (int attempt = 0; attempt < kTries; ++attempt) {
    const double target = total * uniform(options.area_range[0], options.area_range[1], seed, index,
                                          counter(epoch, attempt, area));
    const double ratio = std::exp(uniform(log_low, log_high, seed, index, counter(epoch, attempt, aspect)));
    const int64_t w = std::llround(std::sqrt(target * ratio));
    const int64_t h = std::llround(std::sqrt(target / ratio));
    if (w <= 0 || h <= 0 || w > width || h > height) continue;
    const auto top = static_cast<int64_t>(random_below(static_cast<uint64_t>(height - h + 1), seed,
                                                       static_cast<uint64_t>(index), counter(epoch, attempt, row)));
    const auto left = static_cast<int64_t>(random_below(static_cast<uint64_t>(width - w + 1), seed,
                                                        static_cast<uint64_t>(index), counter(epoch, attempt, column)));
    return {top, left, h, w};
  }
  return fallback(height, width, options);
}

}  // namespace kusari::data
