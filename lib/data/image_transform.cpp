#include <kusari/data/image_transform.h>

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

}  // namespace

void check_image_options(const ImageOptions& options) {
  check_pair(options.resize_height, options.resize_width, "resize");
  check_pair(options.crop_height, options.crop_width, "crop");
  for (float s : options.stddev) {
    if (s == 0) throw ValueError("ImageOptions: expected non-zero stddev on every channel, got 0");
  }
}

Image resize_image(const Image& image, const ImageOptions& options) {
  if (options.resize_height == 0) return image;
  return resize_bilinear(image, options.resize_height, options.resize_width);
}

Array augment_image(const Image& image, const ImageOptions& options, int64_t index, int64_t epoch,
                    const std::string& name) {
  const int64_t height = options.crop_height ? options.crop_height : image.height;
  const int64_t width = options.crop_width ? options.crop_width : image.width;
  if (height > image.height || width > image.width) {
    throw ShapeError(cat(name, ": cannot crop ", height, " x ", width, " from an image of ", image.height, " x ",
                         image.width));
  }
  const auto spare_y = static_cast<uint64_t>(image.height - height + 1);
  const auto spare_x = static_cast<uint64_t>(image.width - width + 1);
  const int64_t top = options.random_crop ? static_cast<int64_t>(draw_below(spare_y, options, index, epoch, crop_y))
                                          : (image.height - height) / 2;
  const int64_t left = options.random_crop ? static_cast<int64_t>(draw_below(spare_x, options, index, epoch, crop_x))
                                           : (image.width - width) / 2;
  const bool mirror = options.random_flip && draw_below(2, options, index, epoch, flip) == 1;
  Array out = Array::empty({3, height, width}, Dtype::float32);
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
