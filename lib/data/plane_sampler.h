#pragma once
// Crop, resize, colour conversion, flip and normalisation from a JPEG's Y, Cb, Cr planes: only the
// output pixels are converted to RGB.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/data/image_sampler.h>
#include <kusari/data/image_transform.h>
#include <kusari/data/jpeg_planes.h>

namespace kusari::data {

// `region` (in the luma plane's coordinates) of `image` resampled bilinearly to out_height x out_width
// on each plane (chroma at its own resolution, centred), converted to RGB by the JFIF equations
// (clamped to [0, 255]), mirrored when asked and normalised as sample_region does.
KUSARI_API Array sample_jpeg_planes(const JpegPlanes& image, const Region& region, int64_t out_height, int64_t out_width,
                                    bool mirror, const ImageOptions& options);

}  // namespace kusari::data
