#pragma once
// Little-endian integer encoding and bounds-checked decoding shared by the .npy and zip code
// (internal to the library; not installed).

#include <cstdint>
#include <string>
#include <string_view>

#include <kusari/core/error.h>

namespace kusari::serializers::detail {

// Appends `value` to `out` as sizeof(T) little-endian bytes.
template <class T>
void put_le(std::string& out, T value) {
  const auto bits = static_cast<uint64_t>(value);
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

// Reads little-endian integers and byte runs from a buffer; running past its end throws IOError
// naming `context` (the file and the structure being read) and the offset.
class ByteReader {
 public:
  // Reads `bytes`, whose first byte sits at `base_offset` in the file (for messages).
  ByteReader(std::string_view bytes, std::string context, uint64_t base_offset = 0)
      : bytes_(bytes), context_(std::move(context)), base_offset_(base_offset) {}

  // The next sizeof(T) bytes as a little-endian unsigned integer.
  template <class T>
  T get() {
    const std::string_view raw = take(sizeof(T));
    uint64_t value = 0;
    for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<uint64_t>(static_cast<uint8_t>(raw[i])) << (8 * i);
    return static_cast<T>(value);
  }
  // The next n bytes.
  std::string_view take(size_t n) {
    if (n > bytes_.size() - position_) {
      throw IOError(cat(context_, ": truncated: expected ", n, " more bytes at offset ", base_offset_ + position_,
                        ", found ", bytes_.size() - position_));
    }
    const std::string_view out = bytes_.substr(position_, n);
    position_ += n;
    return out;
  }
  // Bytes consumed so far.
  size_t position() const { return position_; }

 private:
  std::string_view bytes_;
  std::string context_;
  uint64_t base_offset_;
  size_t position_ = 0;
};

}  // namespace kusari::serializers::detail
