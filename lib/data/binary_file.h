#pragma once
// Whole-file reads, with gzip files (magic bytes 1f 8b) decompressed transparently.

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>

namespace kusari::data {

// The bytes of a file, read in one go; throws IOError naming the file when it cannot be read.
KUSARI_API std::vector<uint8_t> read_file(const std::string& path);
// True when `bytes` start with the gzip magic 1f 8b.
KUSARI_API bool is_gzip(const std::vector<uint8_t>& bytes);
// The decompressed contents of gzip data (concatenated members joined); throws IOError naming `name`
// and the compressed byte offset when the stream is corrupt or ends early.
KUSARI_API std::vector<uint8_t> gunzip(const std::vector<uint8_t>& compressed, const std::string& name);
// The contents of a file, decompressed when it is gzip.
KUSARI_API std::vector<uint8_t> read_maybe_gzip(const std::string& path);

}  // namespace kusari::data
