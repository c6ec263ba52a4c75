#include <kusari/serializers/atomic_file.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include <kusari/core/error.h>

namespace kusari::serializers {
namespace {

// Distinguishes the temporary files of one process.
std::atomic<uint64_t> temp_counter{0};

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  for (int attempt = 0; fd_ < 0; ++attempt) {
    temp_path_ = cat(path_, ".tmp-", ::getpid(), "-", temp_counter++);
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && (errno != EEXIST || attempt == 100)) {
      throw IOError(cat("cannot write '", path_, "': creating the temporary file '", temp_path_,
                        "' failed: ", std::strerror(errno)));
    }
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(temp_path_.c_str());
}

void AtomicFile::fail(const std::string& action) const {
  throw IOError(cat("cannot write '", path_, "': ", action, " failed: ", std::strerror(errno)));
}

void AtomicFile::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      fail(cat("writing ", bytes.size(), " bytes at offset ", size_, " of '", temp_path_, "'"));
    }
    bytes.remove_prefix(static_cast<size_t>(written));
    size_ += static_cast<uint64_t>(written);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail(cat("flushing '", temp_path_, "'"));
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0 || ::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_path_.c_str());
    errno = error;
    fail(cat(closed != 0 ? "closing '" : "renaming '", temp_path_, "'", closed != 0 ? "" : " into place"));
  }
}

}  // namespace kusari::serializers
