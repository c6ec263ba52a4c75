#include <kusari/data/turbojpeg_handle.h>

#include <cstring>

#include <turbojpeg.h>

#include <kusari/core/error.h>

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

}  // namespace kusari::data
