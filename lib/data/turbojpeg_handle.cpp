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

 private:
  tjhandle handle_;
};

}  // namespace

void* turbojpeg_decompressor() {
  thread_local Decompressor decompressor;
  return decompressor.get();
}

bool turbojpeg_failed(void* handle) {
  if (tjGetErrorCode(handle) == TJERR_FATAL) return true;
  return std::strstr(tjGetErrorStr2(handle), "Premature end") != nullptr;  // truncated data
}

}  // namespace kusari::data
