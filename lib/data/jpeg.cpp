#include <kusari/data/jpeg.h>

#include <cstring>

#include <turbojpeg.h>

#include <kusari/core/error.h>
#include <kusari/data/binary_file.h>
#include <kusari/data/cmyk.h>
#include <kusari/data/turbojpeg_handle.h>

namespace kusari::data {
namespace {

// True for the start-of-frame markers (C0-CF but DHT C4, JPG C8 and DAC CC).
bool is_frame_marker(uint8_t marker) {
  return marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc;
}

// Decodes at `scale` into `format` (3 or 4 bytes a pixel); returns the pixels, height and width.
std::vector<uint8_t> decompress(tjhandle handle, const std::vector<uint8_t>& bytes, const std::string& name,
                                int width, int height, int format) {
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * static_cast<size_t>(height) *
                              static_cast<size_t>(tjPixelSize[format]));
  if (tjDecompress2(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), pixels.data(), width, 0, height,
                    format, 0) != 0 &&
      turbojpeg_failed(handle)) {
    throw_turbojpeg_error(handle, cat(name, ": cannot decode the JPEG data of ", bytes.size(), " bytes"));
  }
  return pixels;
}

}  // namespace

bool is_jpeg(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff;
}

std::optional<JpegHeader> scan_jpeg_header(const std::vector<uint8_t>& bytes) {
  if (!is_jpeg(bytes)) return std::nullopt;
  JpegHeader header;
  size_t at = 2;
  while (at + 4 <= bytes.size()) {
    if (bytes[at] != 0xff) return std::nullopt;
    const uint8_t marker = bytes[at + 1];
    if (marker == 0xff) {  // fill byte
      ++at;
      continue;
    }
    const size_t length = (size_t{bytes[at + 2]} << 8) | bytes[at + 3];
    const uint8_t* body = bytes.data() + at + 4;
    const size_t available = bytes.size() - at - 4;
    if (marker == 0xee && length >= 7 && available >= 5 && std::memcmp(body, "Adobe", 5) == 0) header.adobe = true;
    if (is_frame_marker(marker)) {
      if (available < 5) return std::nullopt;
      header.height = (int64_t{body[1]} << 8) | body[2];
      header.width = (int64_t{body[3]} << 8) | body[4];
      return header;
    }
    if (marker == 0xda || length < 2) return std::nullopt;  // a scan before any frame
    at += 2 + length;
  }
  return std::nullopt;
}

JpegScale choose_jpeg_scale(int64_t height, int64_t width, int64_t min_height, int64_t min_width) {
  static const std::vector<JpegScale> fast = [] {
    int count = 0;
    const tjscalingfactor* factors = tjGetScalingFactors(&count);
    std::vector<JpegScale> result;
    for (int i = 0; factors != nullptr && i < count; ++i) {
      const int denom = factors[i].denom;
      if (factors[i].num == 1 && denom > 1 && (denom & (denom - 1)) == 0) result.push_back({1, denom});
    }
    return result;
  }();
  JpegScale best;
  for (const JpegScale& scale : fast) {
    const bool covers = scaled_size(height, scale) >= min_height && scaled_size(width, scale) >= min_width;
    if (covers && scale.denom > best.denom) best = scale;
  }
  return best;
}

std::pair<int64_t, int64_t> jpeg_size(const std::vector<uint8_t>& bytes, const std::string& name) {
  const TurboJpegHeader header = read_turbojpeg_header(turbojpeg_decompressor(), bytes, name);
  return {header.height, header.width};
}

int64_t scaled_size(int64_t side, JpegScale scale) { return (side * scale.num + scale.denom - 1) / scale.denom; }

Image decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& name, int64_t min_height,
                  int64_t min_width) {
  tjhandle handle = turbojpeg_decompressor();
  const TurboJpegHeader header = read_turbojpeg_header(handle, bytes, name);
  const JpegDecodeSize size = choose_decode_size(header, min_height, min_width, name);
  const auto out_height = static_cast<int>(size.height);
  const auto out_width = static_cast<int>(size.width);
  if (header.colorspace == TJCS_CMYK || header.colorspace == TJCS_YCCK) {
    const std::optional<JpegHeader> markers = scan_jpeg_header(bytes);
    const std::vector<uint8_t> cmyk = decompress(handle, bytes, name, out_width, out_height, TJPF_CMYK);
    return {out_height, out_width, cmyk_to_rgb(cmyk, markers && markers->adobe)};
  }
  return {out_height, out_width, decompress(handle, bytes, name, out_width, out_height, TJPF_RGB)};
}

Image read_jpeg(const std::string& path) { return decode_jpeg(read_file(path), path); }

}  // namespace kusari::data
