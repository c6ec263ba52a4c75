#pragma once
// The IDX format of MNIST-style files: magic 00 00 <item type> <number of axes>, one big-endian int32
// extent per axis, then the items in row-major order (big-endian when wider than a byte).

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari::data {

// IDX item type codes (byte 2 of the magic number).
enum class IdxType : uint8_t { uint8 = 0x08, int8 = 0x09, int16 = 0x0B, int32 = 0x0C, float32 = 0x0D, float64 = 0x0E };

// What the header of an IDX file says.
struct KUSARI_API IdxHeader {
  IdxType type = IdxType::uint8;  // item type
  Shape shape;                    // extent of each axis
  int64_t data_offset = 0;        // byte offset of the first item
};

// The name of an item type ("unsigned byte", "float32", ...).
KUSARI_API std::string idx_type_name(IdxType type);
// Parses the header of IDX bytes and checks that the file holds exactly the items it announces;
// throws IOError naming `name` and the byte offset on a wrong magic number, an unknown item type,
// a truncated file or trailing bytes.
KUSARI_API IdxHeader parse_idx_header(const std::vector<uint8_t>& bytes, const std::string& name);
// Reads an IDX file (plain or gzip) into an array: uint8, int32 (for int8, int16 and int32 items),
// float32 or float64.
KUSARI_API Array read_idx(const std::string& path);

}  // namespace kusari::data
