#pragma once
// A file that appears at its path complete or not at all: written under a temporary name in the same
// directory and renamed into place only when finished.

#include <cstdint>
#include <string>
#include <string_view>

#include <kusari/core/api.h>

namespace kusari::serializers {

// An output file written under a temporary name beside `path` and renamed over `path` by commit();
// destroyed uncommitted (after an error), it removes the temporary file and leaves `path` as it was.
class KUSARI_API AtomicFile {
 public:
  // Creates the temporary file; throws IOError naming `path` when its directory does not accept it.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends bytes; throws IOError naming `path` and the system's reason on failure.
  void write(std::string_view bytes);
  // Bytes written so far.
  uint64_t size() const { return size_; }
  // Flushes the data to disk and renames the temporary file to `path`.
  void commit();
  // The destination path.
  const std::string& path() const { return path_; }

 private:
  // Throws IOError: "cannot write '<path>': <action> failed: <system reason>".
  [[noreturn]] void fail(const std::string& action) const;

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace kusari::serializers
