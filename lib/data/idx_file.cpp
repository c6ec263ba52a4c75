#include <kusari/data/idx_file.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

#include <kusari/data/binary_file.h>

namespace kusari::data {
namespace {

// Item size in bytes, or 0 for a code that is not an IDX type.
int64_t item_bytes(uint8_t code) {
  switch (static_cast<IdxType>(code)) {
    case IdxType::uint8:
    case IdxType::int8: return 1;
    case IdxType::int16: return 2;
    case IdxType::int32:
    case IdxType::float32: return 4;
    case IdxType::float64: return 8;
  }
  return 0;
}

// "0x08".
std::string hex_byte(uint8_t byte) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", byte);
  return text;
}

uint32_t big_endian_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 |
         p[3];
}

// Item i of a big-endian array of T.
template <class T>
T big_endian_item(const uint8_t* data, int64_t i) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, data + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  if constexpr (std::endian::native == std::endian::little) std::reverse(bytes, bytes + sizeof(T));
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

// Converts the items of the file into a new array of dtype Out.
template <class Item, class Out>
Array convert_items(const uint8_t* data, const Shape& shape) {
  Array out = Array::empty(shape, dtype_of<Out>(), Device::cpu());
  Out* dst = out.data<Out>();
  const int64_t n = shape.numel();
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<Out>(big_endian_item<Item>(data, i));
  return out;
}

}  // namespace

std::string idx_type_name(IdxType type) {
  switch (type) {
    case IdxType::uint8: return "unsigned byte";
    case IdxType::int8: return "signed byte";
    case IdxType::int16: return "int16";
    case IdxType::int32: return "int32";
    case IdxType::float32: return "float32";
    case IdxType::float64: return "float64";
  }
  return cat("unknown type ", hex_byte(static_cast<uint8_t>(type)));
}

IdxHeader parse_idx_header(const std::vector<uint8_t>& bytes, const std::string& name) {
  const auto size = static_cast<int64_t>(bytes.size());
  if (size < 4) {
    throw IOError(cat(name, ": truncated IDX file: the 4-byte magic number ends at byte offset 4, the file ends at ",
                      size));
  }
  if (bytes[0] != 0 || bytes[1] != 0) {
    throw IOError(cat(name, ": not an IDX file: expected the magic number to start with 0x00 0x00 at byte offset 0, ",
                      "got ", hex_byte(bytes[0]), " ", hex_byte(bytes[1])));
  }
  if (item_bytes(bytes[2]) == 0) {
    throw IOError(cat(name, ": unknown IDX item type ", hex_byte(bytes[2]),
                      " at byte offset 2 (expected 0x08, 0x09, 0x0b, 0x0c, 0x0d or 0x0e)"));
  }
  IdxHeader header;
  header.type = static_cast<IdxType>(bytes[2]);
  const int64_t ndim = bytes[3];
  header.data_offset = 4 + 4 * ndim;
  if (size < header.data_offset) {
    throw IOError(cat(name, ": truncated IDX file: the extents of ", ndim, " axes end at byte offset ",
                      header.data_offset, ", the file ends at ", size));
  }
  for (int64_t d = 0; d < ndim; ++d) header.shape.push_back(big_endian_u32(bytes.data() + 4 + 4 * d));
  int64_t end = item_bytes(bytes[2]);
  // The product of the non-zero extents must be addressable too: a zero extent empties the data but
  // leaves the others in the array's strides.
  int64_t reach = end;
  bool overflow = false;
  for (int64_t extent : header.shape) {
    overflow |= __builtin_mul_overflow(end, extent, &end);
    overflow |= __builtin_mul_overflow(reach, std::max<int64_t>(extent, 1), &reach);
  }
  if (overflow || __builtin_add_overflow(end, header.data_offset, &end)) {
    throw IOError(cat(name, ": the IDX header announces shape ", header.shape, ", too large to address"));
  }
  if (size < end) {
    throw IOError(cat(name, ": truncated IDX file: ", header.shape.numel(), " items of shape ", header.shape,
                      " need data up to byte offset ", end, ", the file ends at ", size));
  }
  if (size > end) {
    throw IOError(cat(name, ": unexpected bytes after the IDX data: the items end at byte offset ", end,
                      ", the file has ", size, " bytes"));
  }
  return header;
}

Array read_idx(const std::string& path) {
  const std::vector<uint8_t> bytes = read_maybe_gzip(path);
  const IdxHeader header = parse_idx_header(bytes, path);
  const uint8_t* data = bytes.data() + header.data_offset;
  switch (header.type) {
    case IdxType::uint8: return convert_items<uint8_t, uint8_t>(data, header.shape);
    case IdxType::int8: return convert_items<int8_t, int32_t>(data, header.shape);
    case IdxType::int16: return convert_items<int16_t, int32_t>(data, header.shape);
    case IdxType::int32: return convert_items<int32_t, int32_t>(data, header.shape);
    case IdxType::float32: return convert_items<float, float>(data, header.shape);
    case IdxType::float64: return convert_items<double, double>(data, header.shape);
  }
  throw IOError(cat(path, ": unknown IDX item type"));
}

}  // namespace kusari::data
