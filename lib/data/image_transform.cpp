#include <kusari/data/image_transform.h>

#include <limits>

#include <kusari/data/random_stream.h>

namespace kusari::data {
namespace {

// Each augmentation draw of one example uses its own counter (index, epoch * kDraws + draw).
enum Draw : uint64_t { crop_y, crop_x, flip, kDraws };

uint64_t draw_below(uint64_t n, const ImageOptions& options, int64_t index, int64_t epoch, Draw draw) {
  return random_below(n, options.seed, static_cast<uint64_t>(index), static_cast<uint64_t>(epoch) * kDraws + draw);
}

void check_pair(int64_t height, int64_t width, const char* what) {
  if (height < 0 || width < 0 || (height == 0) != (width == 0)) {
    throw ValueError(cat("ImageOptions: expected a ", what, " size with both sides positive or both 0, got ", height,
                         " x ", width));
  }
}

void check_range(const std::array<double, 2>& range, double high, const char* what) {
  if (!(range[0] > 0 && range[0] <= range[1] && range[1] <= high)) {
    throw ValueError(cat("ImageOptions: expected ", what, " with 0 < low <= high <= ", high, ", got [", range[0],
                         ", ", range[1], "]"));
  }
}

void check_resizes(const ImageOptions& options) {
  if (options.resize_shorter < 0) {
    throw ValueError(cat("ImageOptions: expected resize_shorter >= 0, got ", options.resize_shorter));
  }
  const int ways = (options.resize_height > 0) + (options.resize_shorter > 0) + options.random_resized_crop;
  if (ways > 1) {
    throw ValueError(cat("ImageOptions: expected at most one of resize_height/width (", options.resize_height, " x ",
                         options.resize_width, "), resize_shorter (", options.resize_shorter,
                         ") and random_resized_crop (", options.random_resized_crop, ")"));
  }
  if (!options.random_resized_crop) return;
  if (options.crop_height == 0 || options.random_crop) {
    throw ValueError(cat("ImageOptions: random_resized_crop expects a crop size and no random_crop, got ",
                         options.crop_height, " x ", options.crop_width, " and random_crop = ", options.random_crop));
  }
  check_range(options.area_range, 1.0, "an area_range");
  check_range(options.aspect_range, std::numeric_limits<double>::infinity(), "an aspect_range");
}

// The luminance of the crop (top, left, height, width), mirrored when asked, normalised by channel 0.
Array luminance(const Image& image, const ImageOptions& options, std::array<int64_t, 4> crop, bool mirror) {
  const auto [top, left, height, width] = crop;
  Array out = Array::empty({1, height, width}, Dtype::float32, Device::cpu());
  float* dst = out.data<float>();
  const float scale = 1.0f / (255.0f * options.stddev[0]), shift = options.mean[0] / options.stddev[0];
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      const int64_t sx = left + (mirror ? width - 1 - x : x);
      const float luma = 0.299f * image.at(top + y, sx, 0) + 0.587f * image.at(top + y, sx, 1) +
                         0.114f * image.at(top + y, sx, 2);
      *dst++ = luma * scale - shift;
    }
  }
  return out;
}

}  // namespace

void check_image_options(const ImageOptions& options) {
  check_pair(options.resize_height, options.resize_width, "resize");
  check_pair(options.crop_height, options.crop_width, "crop");
  for (float s : options.stddev) {
    if (s == 0) throw ValueError("ImageOptions: expected non-zero stddev on every channel, got 0");
  }
  if (options.channels != 1 && options.channels != 3) {
    throw ValueError(cat("ImageOptions: expected channels 1 or 3, got ", options.channels));
  }
  check_resizes(options);
}

Image resize_image(const Image& image, const ImageOptions& options) {
  if (options.resize_height == 0) return image;
  return resize_bilinear(image, options.resize_height, options.resize_width);
}

CropPlacement place_crop(int64_t image_height, int64_t image_width, int64_t height, int64_t width,
                         const ImageOptions& options, int64_t index, int64_t epoch) {
  const auto spare_y = static_cast<uint64_t>(image_height - height + 1);
  const auto spare_x = static_cast<uint64_t>(image_width - width + 1);
  const int64_t top = options.random_crop ? static_cast<int64_t>(draw_below(spare_y, options, index, epoch, crop_y))
                                          : (image_height - height) / 2;
  const int64_t left = options.random_crop ? static_cast<int64_t>(draw_below(spare_x, options, index, epoch, crop_x))
                                           : (image_width - width) / 2;
  return {top, left, options.random_flip && draw_below(2, options, index, epoch, flip) == 1};
}

Array augment_image(const Image& image, const ImageOptions& options, int64_t index, int64_t epoch,
                    const std::string& name) {
  const int64_t height = options.crop_height ? options.crop_height : image.height;
  const int64_t width = options.crop_width ? options.crop_width : image.width;
  if (height > image.height || width > image.width) {
    throw ShapeError(cat(name, ": cannot crop ", height, " x ", width, " from an image of ", image.height, " x ",
                         image.width));
  }
  const auto [top, left, mirror] = place_crop(image.height, image.width, height, width, options, index, epoch);
  if (options.channels == 1) return luminance(image, options, {top, left, height, width}, mirror);
  Array out = Array::empty({3, height, width}, Dtype::float32, Device::cpu());
  float* dst = out.data<float>();
  for (int64_t c = 0; c < 3; ++c) {
    const float scale = 1.0f / (255.0f * options.stddev[static_cast<size_t>(c)]);
    const float shift = options.mean[static_cast<size_t>(c)] / options.stddev[static_cast<size_t>(c)];
    for (int64_t y = 0; y < height; ++y) {
      for (int64_t x = 0; x < width; ++x) {
        const int64_t source_x = left + (mirror ? width - 1 - x : x);
        *dst++ = static_cast<float>(image.at(top + y, source_x, c)) * scale - shift;
      }
    }
  }
  return out;
}

}  // namespace kusari::data
