#include <kusari/data/jpeg.h>

#include <cstring>

#include <turbojpeg.h>

#include <kusari/core/error.h>
#include <kusari/data/binary_file.h>

namespace kusari::data {
namespace {

// One TurboJPEG decompressor per thread (handles are not thread-safe, and are cheap to keep).
class Decompressor {
 public:
  Decompressor() : handle_(tjInitDecompress()) {}
  ~Decompressor() {
    if (handle_) tjDestroy(handle_);
  }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  tjhandle get() const {
    if (!handle_) throw IOError(cat("decode_jpeg: cannot start TurboJPEG (", tjGetErrorStr2(nullptr), ")"));
    return handle_;
  }

 private:
  tjhandle handle_;
};

// True when the last TurboJPEG call on `handle` failed in a way that leaves the image wrong.
bool failed(tjhandle handle) {
  if (tjGetErrorCode(handle) == TJERR_FATAL) return true;
  return std::strstr(tjGetErrorStr2(handle), "Premature end") != nullptr;  // truncated data
}

}  // namespace

Image decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& name) {
  thread_local Decompressor decompressor;
  tjhandle handle = decompressor.get();
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), &width, &height,
                          &subsampling, &colorspace) != 0) {
    throw IOError(cat(name, ": not a readable JPEG (", tjGetErrorStr2(handle), ")"));
  }
  Image image{height, width, std::vector<uint8_t>(static_cast<size_t>(width) * static_cast<size_t>(height) * 3)};
  if (tjDecompress2(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), image.pixels.data(), width, 0,
                    height, TJPF_RGB, 0) != 0 &&
      failed(handle)) {
    throw IOError(cat(name, ": cannot decode the JPEG data of ", bytes.size(), " bytes (", tjGetErrorStr2(handle),
                      ")"));
  }
  return image;
}

Image read_jpeg(const std::string& path) { return decode_jpeg(read_file(path), path); }

}  // namespace kusari::data
