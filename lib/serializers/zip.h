#pragma once
// A minimal zip archive writer and reader (stored or deflated entries, ZIP64), enough for .npz files.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/serializers/atomic_file.h>

namespace kusari::serializers {

// Writes a zip archive entry by entry; the archive appears at its path only when finish() succeeds.
class KUSARI_API ZipWriter {
 public:
  // Starts an archive that finish() moves to `path`; with force_zip64 every entry and the end record use
  // the ZIP64 extensions (which are otherwise used only past 4 GiB or 65535 entries).
  explicit ZipWriter(std::string path, bool force_zip64 = false);

  // Adds the entry `name` holding `data`, deflated when `compress`, stored as is otherwise; a name
  // added twice throws ValueError.
  void add(const std::string& name, std::string_view data, bool compress = false);
  // Writes the central directory and renames the archive into place.
  void finish();

 private:
  struct Entry {
    std::string name;
    uint16_t method = 0;
    uint32_t crc = 0;
    uint64_t compressed_size = 0;
    uint64_t size = 0;
    uint64_t offset = 0;
  };

  AtomicFile file_;
  bool force_zip64_;
  std::vector<Entry> entries_;
  std::set<std::string> names_;
};

// Reads entries of a zip archive, checking sizes and CRC-32; malformed archives throw IOError naming
// the file and what was wrong.
class KUSARI_API ZipReader {
 public:
  // Opens `path` and reads its central directory.
  explicit ZipReader(std::string path);
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  // Whether the archive has an entry `name`.
  bool contains(const std::string& name) const { return entries_.contains(name); }
  // Entry names in sorted order.
  std::vector<std::string> names() const;
  // The uncompressed contents of entry `name` (ValueError when absent).
  std::string read(const std::string& name) const;
  // The archive's path.
  const std::string& path() const { return path_; }

 private:
  struct Entry {
    uint16_t flags = 0;
    uint16_t method = 0;
    uint32_t crc = 0;
    uint64_t compressed_size = 0;
    uint64_t size = 0;
    uint64_t offset = 0;
  };

  // Exactly `size` bytes at `offset`; throws IOError mentioning `what` if the file ends first.
  std::string read_at(uint64_t offset, uint64_t size, const std::string& what) const;
  // Finds the end record (ZIP64 too) and indexes every entry of the central directory.
  void read_central_directory();

  std::string path_;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  std::map<std::string, Entry> entries_;
};

}  // namespace kusari::serializers
