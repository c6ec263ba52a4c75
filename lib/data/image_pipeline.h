#pragma once
// From image bytes (or stored pixels) to the float32 example: plan the crop on the full-size
// geometry, decode only as many pixels as the crop needs, then sample it.

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/data/image.h>
#include <kusari/data/image_decode.h>
#include <kusari/data/image_sampler.h>
#include <kusari/data/image_transform.h>

namespace kusari::data {

// What one example takes from its image: a region (in the coordinates of the size it was planned on)
// and the output size.
struct KUSARI_API ImagePlan {
  Region region;        // the source rectangle
  int64_t height = 0;   // output rows
  int64_t width = 0;    // output columns
  bool mirror = false;  // flipped left-right
};

// True when `options` crop by sampling a planned region (random_resized_crop or resize_shorter);
// otherwise images go through resize_image and augment_image, pixel for pixel as before.
KUSARI_API bool samples_regions(const ImageOptions& options);
// The size of a height x width image after resize_shorter = `shorter` (the longer side scaled and
// truncated, as torchvision does).
KUSARI_API ImageSize shorter_side_size(ImageSize size, int64_t shorter);
// The region and output size of example (index, epoch) for an image of `size` (samples_regions
// options only); throws ShapeError naming `name` when the crop exceeds the resized image.
KUSARI_API ImagePlan plan_image(ImageSize size, const ImageOptions& options, int64_t index, int64_t epoch,
                                const std::string& name);
// The example's float32 (channels, H, W) image from decoded or stored pixels.
KUSARI_API Array transform_image(const Image& image, const ImageOptions& options, int64_t index, int64_t epoch,
                                 const std::string& name);
// The example's image from file bytes: with samples_regions options the JPEG is decoded at the
// smallest scale that still gives the planned region at least its output size.
KUSARI_API Array transform_image_bytes(const std::vector<uint8_t>& bytes, const std::string& name,
                                       const ImageOptions& options, int64_t index, int64_t epoch);

}  // namespace kusari::data
