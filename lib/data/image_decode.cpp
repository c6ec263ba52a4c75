#include <kusari/data/image_decode.h>

#include <fstream>
#include <optional>

#include <kusari/core/error.h>
#include <kusari/data/binary_file.h>
#include <kusari/data/jpeg.h>
#include <kusari/data/png.h>

namespace kusari::data {
namespace {

// Up to `count` bytes from the start of `path` (fewer when the file is shorter).
std::vector<uint8_t> read_prefix(const std::string& path, size_t count) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(cat(path, ": cannot open the image file"));
  std::vector<uint8_t> bytes(count);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(count));
  if (in.bad()) throw IOError(cat(path, ": read error"));
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

[[noreturn]] void refuse(const std::vector<uint8_t>& bytes, const std::string& name) {
  throw IOError(cat(name, ": expected a JPEG (FF D8 FF) or PNG (89 'PNG') signature, got ",
                    bytes.size() < 3 ? "fewer than 3 bytes" : "neither", " (", bytes.size(), " bytes)"));
}

}  // namespace

Image decode_image(const std::vector<uint8_t>& bytes, const std::string& name, int64_t min_height,
                   int64_t min_width) {
  if (is_jpeg(bytes)) return decode_jpeg(bytes, name, min_height, min_width);
  if (is_png(bytes)) return decode_png(bytes, name);
  refuse(bytes, name);
}

double decode_factor(const std::vector<uint8_t>& bytes, ImageSize size, int64_t min_height, int64_t min_width) {
  if (!is_jpeg(bytes) || (min_height <= 0 && min_width <= 0)) return 1.0;
  const JpegScale scale = choose_jpeg_scale(size.height, size.width, min_height, min_width);
  return static_cast<double>(scale.num) / static_cast<double>(scale.denom);
}

Image read_image(const std::string& path) { return decode_image(read_file(path), path); }

ImageSize image_size(const std::vector<uint8_t>& bytes, const std::string& name) {
  if (is_png(bytes)) {
    const auto [height, width] = png_size(bytes, name);
    return {height, width};
  }
  if (!is_jpeg(bytes)) refuse(bytes, name);
  const auto [height, width] = jpeg_size(bytes, name);
  return {height, width};
}

ImageSize read_image_size(const std::string& path) {
  // 4 KiB hold the start-of-frame marker of most JPEGs; long metadata (EXIF thumbnails) needs more.
  for (size_t count = size_t{1} << 12;; count *= 8) {
    const std::vector<uint8_t> bytes = read_prefix(path, count);
    if (is_png(bytes)) return image_size(bytes, path);
    if (!is_jpeg(bytes)) refuse(bytes, path);
    if (const std::optional<JpegHeader> header = scan_jpeg_header(bytes)) return {header->height, header->width};
    if (bytes.size() < count) return image_size(bytes, path);  // the whole file: TurboJPEG decides
  }
}

}  // namespace kusari::data
