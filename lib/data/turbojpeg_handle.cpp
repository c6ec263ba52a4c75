#include <kusari/data/turbojpeg_handle.h>

#include <cstring>

#include <turbojpeg.h>

#include <kusari/core/error.h>
#include <kusari/data/image.h>

namespace kusari::data {
namespace {

// Owns one decompressor.
class Decompressor {
 public:
  Decompressor() : handle_(tjInitDecompress()) {}
  ~Decompressor() {
    if (handle_) tjDestroy(handle_);
  }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  tjhandle get() const {
    if (!handle_) throw IOError(cat("TurboJPEG: cannot start a decompressor (", tjGetErrorStr2(nullptr), ")"));
    return handle_;
  }
  // Starts over with a new handle.
  void reset() {
    if (handle_) tjDestroy(handle_);
    handle_ = tjInitDecompress();
  }

 private:
  tjhandle handle_;
};

thread_local Decompressor decompressor;

}  // namespace

void* turbojpeg_decompressor() { return decompressor.get(); }

void throw_turbojpeg_error(void* handle, const std::string& what) {
  const std::string message = cat(what, " (", tjGetErrorStr2(handle), ")");
  decompressor.reset();
  throw IOError(message);
}

bool turbojpeg_failed(void* handle) {
  if (tjGetErrorCode(handle) == TJERR_FATAL) return true;
  return std::strstr(tjGetErrorStr2(handle), "Premature end") != nullptr;  // truncated data
}

TurboJpegHeader read_turbojpeg_header(void* handle, const std::vector<uint8_t>& bytes, const std::string& name) {
  TurboJpegHeader header;
  if (tjDecompressHeader3(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), &header.width,
                          &header.height, &header.subsampling, &header.colorspace) != 0) {
    throw_turbojpeg_error(handle, cat(name, ": not a readable JPEG"));
  }
  return header;
}

JpegDecodeSize choose_decode_size(const TurboJpegHeader& header, int64_t min_height, int64_t min_width,
                                  const std::string& name) {
  check_image_dimensions(header.height, header.width, name);
  const JpegScale scale = min_height > 0 || min_width > 0
                              ? choose_jpeg_scale(header.height, header.width, min_height, min_width)
                              : JpegScale{};
  return {scale, scaled_size(header.height, scale), scaled_size(header.width, scale)};
}

}  // namespace kusari::data
