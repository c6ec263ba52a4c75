#include <kusari/data/jpeg_planes.h>

#include <cstring>

#include <turbojpeg.h>

#include <kusari/core/error.h>
#include <kusari/data/jpeg.h>

namespace kusari::data {
namespace {

// One TurboJPEG decompressor per thread.
tjhandle decompressor() {
  struct Handle {
    tjhandle handle = tjInitDecompress();
    ~Handle() {
      if (handle) tjDestroy(handle);
    }
  };
  thread_local Handle h;
  if (!h.handle) throw IOError(cat("decode_jpeg_planes: cannot start TurboJPEG (", tjGetErrorStr2(nullptr), ")"));
  return h.handle;
}

bool failed(tjhandle handle) {
  if (tjGetErrorCode(handle) == TJERR_FATAL) return true;
  return std::strstr(tjGetErrorStr2(handle), "Premature end") != nullptr;
}

// The empty planes of a width x height image of `subsampling`.
std::vector<Plane> make_planes(int width, int height, int subsampling) {
  std::vector<Plane> planes(subsampling == TJSAMP_GRAY ? 1 : 3);
  for (size_t c = 0; c < planes.size(); ++c) {
    Plane& p = planes[c];
    const int component = static_cast<int>(c);
    p.width = tjPlaneWidth(component, width, subsampling);
    p.height = tjPlaneHeight(component, height, subsampling);
    p.factor_x = c == 0 ? 1.0 : 8.0 / tjMCUWidth[subsampling];
    p.factor_y = c == 0 ? 1.0 : 8.0 / tjMCUHeight[subsampling];
    p.pixels.resize(static_cast<size_t>(p.width * p.height));
  }
  return planes;
}

}  // namespace

JpegPlanes decode_jpeg_planes(const std::vector<uint8_t>& bytes, const std::string& name, int64_t min_height,
                              int64_t min_width) {
  tjhandle handle = decompressor();
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), &width, &height,
                          &subsampling, &colorspace) != 0) {
    throw IOError(cat(name, ": not a readable JPEG (", tjGetErrorStr2(handle), ")"));
  }
  if ((colorspace != TJCS_YCbCr && colorspace != TJCS_GRAY) || subsampling < 0) return {};
  const JpegScale scale =
      min_height > 0 || min_width > 0 ? choose_jpeg_scale(height, width, min_height, min_width) : JpegScale{};
  JpegPlanes out{scaled_size(height, scale), scaled_size(width, scale),
                 static_cast<double>(scale.num) / static_cast<double>(scale.denom), {}};
  out.planes = make_planes(static_cast<int>(out.width), static_cast<int>(out.height), subsampling);
  unsigned char* destinations[3] = {};
  for (size_t c = 0; c < out.planes.size(); ++c) destinations[c] = out.planes[c].pixels.data();
  if (tjDecompressToYUVPlanes(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), destinations,
                              static_cast<int>(out.width), nullptr, static_cast<int>(out.height), 0) != 0 &&
      failed(handle)) {
    throw IOError(cat(name, ": cannot decode the JPEG data of ", bytes.size(), " bytes (", tjGetErrorStr2(handle),
                      ")"));
  }
  return out;
}

}  // namespace kusari::data
