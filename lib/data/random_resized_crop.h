#pragma once
// The box of a random-resized crop (Szegedy et al.'s "Inception" augmentation, as torchvision draws it).

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/data/image_transform.h>

namespace kusari::data {

// A box of whole pixels inside an image.
struct KUSARI_API CropBox {
  int64_t top = 0;     // first row
  int64_t left = 0;    // first column
  int64_t height = 0;  // rows
  int64_t width = 0;   // columns
};

// The box of example (index, epoch) in a height x width image: up to 10 tries of an area share
// uniform in options.area_range and an aspect ratio (width / height) log-uniform in
// options.aspect_range, placed uniformly; when no try fits, the largest centred box whose aspect is
// clamped into the range. Draws depend only on (options.seed, index, epoch).
KUSARI_API CropBox random_resized_crop_box(int64_t height, int64_t width, const ImageOptions& options, int64_t index,
                                           int64_t epoch);

}  // namespace kusari::data
