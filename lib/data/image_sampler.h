#pragma once
// Crop, resize, flip and normalise in one pass: bilinear samples of a region straight into float32.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/data/image.h>
#include <kusari/data/image_transform.h>

namespace kusari::data {

// A rectangle in an image's pixel coordinates; fractional, as a box of the full-size image becomes
// once the image is decoded at a reduced scale.
struct KUSARI_API Region {
  double top = 0;     // first row's edge
  double left = 0;    // first column's edge
  double height = 0;  // rows covered
  double width = 0;   // columns covered
};

// The sampler itself: `region` of an interleaved 8-bit image (`channels` bytes a pixel) resampled
// bilinearly to out_height x out_width, mirrored when asked, into float planes at `out` (one per
// channel, or a single luminance plane of a 3-channel image when `luminance`), value v of channel c
// stored as v * scale[c] - shift[c].
KUSARI_API void sample_planar(const uint8_t* pixels, int64_t height, int64_t width, int64_t channels, const Region& region,
                              int64_t out_height, int64_t out_width, bool mirror, bool luminance, const float* scale,
                              const float* shift, float* out);
// `region` of `image` resampled to out_height x out_width by bilinear interpolation with pixel centres
// aligned (as resize_bilinear; source coordinates clamped to the image), mirrored left-right when
// asked, scaled to [0, 1] and normalised by options.mean and options.stddev into float32
// (options.channels, out_height, out_width); one channel holds the luminance.
KUSARI_API Array sample_region(const Image& image, const Region& region, int64_t out_height, int64_t out_width, bool mirror,
                               const ImageOptions& options);

}  // namespace kusari::data
