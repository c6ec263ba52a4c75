#include <kusari/data/jpeg_planes.h>

#include <turbojpeg.h>

#include <kusari/core/error.h>
#include <kusari/data/image.h>
#include <kusari/data/jpeg.h>
#include <kusari/data/turbojpeg_handle.h>

namespace kusari::data {
namespace {

// Sizes `planes` for a width x height image of `subsampling` (the pixels' old values are left).
void make_planes(int width, int height, int subsampling, std::vector<Plane>& planes) {
  planes.resize(subsampling == TJSAMP_GRAY ? 1 : 3);
  for (size_t c = 0; c < planes.size(); ++c) {
    Plane& p = planes[c];
    const int component = static_cast<int>(c);
    p.width = tjPlaneWidth(component, width, subsampling);
    p.height = tjPlaneHeight(component, height, subsampling);
    p.factor_x = c == 0 ? 1.0 : 8.0 / tjMCUWidth[subsampling];
    p.factor_y = c == 0 ? 1.0 : 8.0 / tjMCUHeight[subsampling];
    p.pixels.resize(static_cast<size_t>(p.width * p.height));
  }
}

}  // namespace

JpegPlanes decode_jpeg_planes(const std::vector<uint8_t>& bytes, const std::string& name, int64_t min_height,
                              int64_t min_width) {
  JpegPlanes out;
  decode_jpeg_planes(bytes, name, min_height, min_width, out);
  return out;
}

bool decode_jpeg_planes(const std::vector<uint8_t>& bytes, const std::string& name, int64_t min_height,
                        int64_t min_width, JpegPlanes& out) {
  tjhandle handle = turbojpeg_decompressor();
  const TurboJpegHeader header = read_turbojpeg_header(handle, bytes, name);
  if ((header.colorspace != TJCS_YCbCr && header.colorspace != TJCS_GRAY) || header.subsampling < 0) {
    out.planes.clear();
    return false;
  }
  const JpegDecodeSize size = choose_decode_size(header, min_height, min_width, name);
  out.height = size.height;
  out.width = size.width;
  out.scale = static_cast<double>(size.scale.num) / static_cast<double>(size.scale.denom);
  make_planes(static_cast<int>(out.width), static_cast<int>(out.height), header.subsampling, out.planes);
  unsigned char* destinations[3] = {};
  for (size_t c = 0; c < out.planes.size(); ++c) destinations[c] = out.planes[c].pixels.data();
  if (tjDecompressToYUVPlanes(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), destinations,
                              static_cast<int>(out.width), nullptr, static_cast<int>(out.height), 0) != 0 &&
      turbojpeg_failed(handle)) {
    out.planes.clear();
    throw_turbojpeg_error(handle, cat(name, ": cannot decode the JPEG data of ", bytes.size(), " bytes"));
  }
  return true;
}

}  // namespace kusari::data
