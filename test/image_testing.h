#pragma once
// Helpers of the image suites: test patterns and encoders (TurboJPEG, libpng) writing their inputs.

#include "testing.h"

#include <csetjmp>
#include <cstring>

#include <png.h>
#include <turbojpeg.h>

namespace kusari::testing {

// A smooth RGB test pattern: R grows to the right, G downwards, B is constant.
inline data::Image rgb_pattern(int64_t height, int64_t width) {
  data::Image image{height, width, {}};
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      image.pixels.push_back(static_cast<uint8_t>(255 * x / (width - 1)));
      image.pixels.push_back(static_cast<uint8_t>(255 * y / (height - 1)));
      image.pixels.push_back(100);
    }
  }
  return image;
}

// `pixels` (width x height, `format` a TJPF_*) compressed by TurboJPEG.
inline std::vector<uint8_t> tj_encode(const uint8_t* pixels, int64_t height, int64_t width, int format,
                                      int subsampling = TJSAMP_444, int quality = 100) {
  tjhandle handle = tjInitCompress();
  REQUIRE(handle != nullptr);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const int status = tjCompress2(handle, pixels, static_cast<int>(width), 0, static_cast<int>(height), format,
                                 &buffer, &size, subsampling, quality, 0);
  std::vector<uint8_t> bytes;
  if (status == 0) bytes.assign(buffer, buffer + size);
  tjFree(buffer);
  tjDestroy(handle);
  REQUIRE(status == 0);
  return bytes;
}

// An RGB image as a JPEG at quality 100 without chroma subsampling.
inline std::vector<uint8_t> encode_rgb(const data::Image& image) {
  return tj_encode(image.pixels.data(), image.height, image.width, TJPF_RGB);
}

// The largest difference between two images of one size.
inline int max_difference(const data::Image& a, const data::Image& b) {
  REQUIRE(a.height == b.height);
  REQUIRE(a.width == b.width);
  int worst = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) worst = std::max(worst, std::abs(a.pixels[i] - b.pixels[i]));
  return worst;
}

// A PNG of the given libpng colour type and bit depth whose rows are `rows` (already packed as the
// file stores them, 16-bit samples big-endian), with `palette` for PNG_COLOR_TYPE_PALETTE, Adam7
// interlaced when asked.
inline std::vector<uint8_t> encode_png(int64_t height, int64_t width, int color_type, int bit_depth,
                                       const std::vector<uint8_t>& rows, const std::vector<png_color>& palette = {},
                                       bool interlaced = false) {
  struct Sink {
    std::vector<uint8_t> bytes;
  } sink;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  REQUIRE(info != nullptr);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    FAIL("libpng could not write the test image");
  }
  png_set_write_fn(
      png, &sink,
      [](png_structp p, png_bytep data, size_t length) {
        auto* s = static_cast<Sink*>(png_get_io_ptr(p));
        s->bytes.insert(s->bytes.end(), data, data + length);
      },
      nullptr);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), bit_depth, color_type,
               interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!palette.empty()) png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
  png_write_info(png, info);
  const int passes = png_set_interlace_handling(png);
  const size_t stride = rows.size() / static_cast<size_t>(height);
  for (int pass = 0; pass < passes; ++pass) {
    for (int64_t y = 0; y < height; ++y) png_write_row(png, rows.data() + static_cast<size_t>(y) * stride);
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return sink.bytes;
}

}  // namespace kusari::testing
