#pragma once
// The per-example image pipeline: resize once after decoding, then crop, flip and normalise into a
// float32 (3, H, W) array. Random choices depend only on (seed, example index, epoch).

#include <array>
#include <cstdint>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/data/image.h>

namespace kusari::data {

// What a data set does with an image file it cannot decode.
enum class BadImagePolicy {
  error,  // throw the IOError naming the file
  skip,   // print the path and reason to stderr (once per path) and give the next decodable example
};

// What happens to each decoded image (sizes of 0 leave that step out). Without random_resized_crop
// and resize_shorter the image is resized (resize_height x resize_width), then cropped; with either,
// the crop is sampled bilinearly from the image decoded at the smallest sufficient JPEG scale.
struct KUSARI_API ImageOptions {
  int64_t resize_height = 0;               // resize (bilinear) to this height ...
  int64_t resize_width = 0;                // ... and width; both 0 keeps the decoded size
  int64_t crop_height = 0;                 // crop to this height ...
  int64_t crop_width = 0;                  // ... and width; both 0 keeps the whole image
  bool random_crop = false;                // crop at a random position, else at the centre
  bool random_flip = false;                // mirror left-right with probability 1/2
  std::array<float, 3> mean = {0, 0, 0};   // subtracted per channel from pixels scaled to [0, 1]
  std::array<float, 3> stddev = {1, 1, 1}; // then divided per channel
  uint64_t seed = 0;                       // stream of the random crop and flip
  bool random_resized_crop = false;        // crop a random box (below), resized to the crop size
  std::array<double, 2> area_range = {0.08, 1.0};          // the box's share of the image area, uniform
  std::array<double, 2> aspect_range = {3.0 / 4, 4.0 / 3};  // its width / height, log-uniform
  int64_t resize_shorter = 0;              // resize so the shorter side has this length, aspect kept
  int64_t channels = 3;                    // 3: RGB; 1: luminance (0.299 R + 0.587 G + 0.114 B)
  BadImagePolicy on_bad_image = BadImagePolicy::error;  // for files that cannot be decoded
};

// Throws ValueError unless sizes come in non-negative pairs (both set or both 0), stddev is non-zero,
// channels is 1 or 3, and random_resized_crop (which needs a crop size and its ranges within (0, 1]
// and (0, inf)) and resize_shorter are not combined with each other or with resize_height/width.
KUSARI_API void check_image_options(const ImageOptions& options);
// The decoded image resized as `options` say (returned unchanged without a resize).
KUSARI_API Image resize_image(const Image& image, const ImageOptions& options);
// Where a crop lies and whether it is mirrored.
struct KUSARI_API CropPlacement {
  int64_t top = 0;      // first row
  int64_t left = 0;     // first column
  bool mirror = false;  // flipped left-right
};
// The placement of a height x width crop in an image_height x image_width image: at a position drawn
// from (options.seed, index, epoch) when random_crop is set, else centred; mirrored when random_flip
// draws so. The crop must fit.
KUSARI_API CropPlacement place_crop(int64_t image_height, int64_t image_width, int64_t height, int64_t width,
                                    const ImageOptions& options, int64_t index, int64_t epoch);
// Crops, flips and normalises `image` into float32 (channels, H, W); the crop position and the flip are drawn
// from (options.seed, index, epoch). Throws ShapeError naming `name` when the crop exceeds the image.
KUSARI_API Array augment_image(const Image& image, const ImageOptions& options, int64_t index, int64_t epoch,
                               const std::string& name);

}  // namespace kusari::data
