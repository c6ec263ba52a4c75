#pragma once
// The per-example image pipeline: resize once after decoding, then crop, flip and normalise into a
// float32 (3, H, W) array. Random choices depend only on (seed, example index, epoch).

#include <array>
#include <cstdint>
#include <string>

#include <kusari/core/array.h>
#include <kusari/data/image.h>

namespace kusari::data {

// What happens to each decoded image (sizes of 0 leave that step out).
struct ImageOptions {
  int64_t resize_height = 0;               // resize (bilinear) to this height ...
  int64_t resize_width = 0;                // ... and width; both 0 keeps the decoded size
  int64_t crop_height = 0;                 // crop to this height ...
  int64_t crop_width = 0;                  // ... and width; both 0 keeps the whole image
  bool random_crop = false;                // crop at a random position, else at the centre
  bool random_flip = false;                // mirror left-right with probability 1/2
  std::array<float, 3> mean = {0, 0, 0};   // subtracted per channel from pixels scaled to [0, 1]
  std::array<float, 3> stddev = {1, 1, 1}; // then divided per channel
  uint64_t seed = 0;                       // stream of the random crop and flip
};

// Throws ValueError unless sizes come in non-negative pairs (both set or both 0) and stddev is non-zero.
void check_image_options(const ImageOptions& options);
// The decoded image resized as `options` say (returned unchanged without a resize).
Image resize_image(const Image& image, const ImageOptions& options);
// Crops, flips and normalises `image` into float32 (3, H, W); the crop position and the flip are drawn
// from (options.seed, index, epoch). Throws ShapeError naming `name` when the crop exceeds the image.
Array augment_image(const Image& image, const ImageOptions& options, int64_t index, int64_t epoch,
                    const std::string& name);

}  // namespace kusari::data
