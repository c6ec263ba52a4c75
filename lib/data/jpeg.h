#pragma once
// JPEG decoding through TurboJPEG, at a reduced scale when the caller needs fewer pixels.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/data/image.h>

namespace kusari::data {

// A TurboJPEG scaling factor num / denom.
struct KUSARI_API JpegScale {
  int num = 1;    // numerator
  int denom = 1;  // denominator
};

// What the markers before a JPEG's first scan say.
struct KUSARI_API JpegHeader {
  int64_t height = 0;   // rows of the full-size image
  int64_t width = 0;    // columns
  bool adobe = false;   // an Adobe APP14 marker is present (its CMYK values are stored inverted)
};

// True when `bytes` start with the JPEG start-of-image marker FF D8 FF.
KUSARI_API bool is_jpeg(const std::vector<uint8_t>& bytes);
// The frame size and Adobe marker, read from the markers alone (no decoding); nullopt when the
// start-of-frame marker lies beyond `bytes` (a file read only in part) or the data is not a JPEG.
KUSARI_API std::optional<JpegHeader> scan_jpeg_header(const std::vector<uint8_t>& bytes);
// The full-size height and width from the JPEG's headers, read by TurboJPEG (which needs the headers
// up to the first scan); throws IOError naming `name` when the data is not a readable JPEG.
KUSARI_API std::pair<int64_t, int64_t> jpeg_size(const std::vector<uint8_t>& bytes, const std::string& name);
// The smallest of TurboJPEG's scaling factors (tjGetScalingFactors) of the form 1/2^k whose output of a height x width
// JPEG still has at least min_height rows and min_width columns (1/1 when none is that large). The
// factors 7/8 ... 9/16 are left out: libjpeg-turbo decodes them without SIMD, and a 500 x 375 image
// took 1.5 ms at 7/8 against 0.8 ms at 1/1 on this machine's EPYC (tjbench).
KUSARI_API JpegScale choose_jpeg_scale(int64_t height, int64_t width, int64_t min_height, int64_t min_width);
// The size of one side of the image decoded at `scale` (TurboJPEG rounds up).
KUSARI_API int64_t scaled_size(int64_t side, JpegScale scale);
// Decodes JPEG bytes to RGB at the smallest scale of choose_jpeg_scale that keeps at least
// min_height x min_width pixels (0 x 0: full size). Grayscale is expanded to three channels; CMYK and
// YCCK files are converted (inverted values when an Adobe marker says so, as in Adobe's files, plain
// ones otherwise). Throws IOError naming `name` when the data is not a JPEG TurboJPEG can decode or
// ends early. Recoverable libjpeg warnings (extraneous bytes) are ignored.
KUSARI_API Image decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& name, int64_t min_height = 0,
                             int64_t min_width = 0);
// Reads and decodes a JPEG file at full size.
KUSARI_API Image read_jpeg(const std::string& path);

}  // namespace kusari::data
