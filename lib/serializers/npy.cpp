#include <kusari/serializers/npy.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>

#include <kusari/serializers/detail/byte_io.h>

namespace kusari::serializers {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr bool kHostBigEndian = std::endian::native == std::endian::big;

// How NumPy spells each dtype kusari stores: kind letter and item size (bfloat16 borrows '<u2').
struct DescrEntry {
  Dtype dtype;
  char kind;
  size_t size;
};
constexpr DescrEntry kDescrs[] = {
    {Dtype::float16, 'f', 2}, {Dtype::float32, 'f', 4}, {Dtype::float64, 'f', 8}, {Dtype::int32, 'i', 4},
    {Dtype::int64, 'i', 8},   {Dtype::uint8, 'u', 1},   {Dtype::bool_, 'b', 1},   {Dtype::bfloat16, 'u', 2},
};

// A parsed NumPy type string.
struct ElementType {
  char kind = 0;
  size_t size = 0;
  bool big_endian = false;
};

// The parsed header of a .npy file and the bytes after it.
struct NpyFile {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
  std::string_view data;
};

// Bytes shown with non-printable ones as \xNN (for messages about bad magic strings).
std::string escaped(std::string_view bytes) {
  std::string out;
  for (char c : bytes) {
    if (std::isprint(static_cast<unsigned char>(c))) {
      out.push_back(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      const auto u = static_cast<unsigned char>(c);
      out += {'\\', 'x', kHex[u >> 4], kHex[u & 15]};
    }
  }
  return out;
}

// Reverses the bytes of each of `count` items of `size` bytes (byte-order conversion).
void swap_each(char* data, int64_t count, size_t size) {
  for (int64_t i = 0; i < count; ++i) std::reverse(data + i * size, data + (i + 1) * size);
}

// Parses the Python dict literal of a .npy header: {'descr': ..., 'fortran_order': ..., 'shape': (...)}.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  NpyFile parse() {
    NpyFile out;
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    while (!consume('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"') fail("only simple (non-structured) dtypes are supported");
        out.descr = string_literal();
        has_descr = true;
      } else if (key == "fortran_order") {
        out.fortran_order = boolean();
        has_order = true;
      } else if (key == "shape") {
        out.shape = tuple();
        has_shape = true;
      } else {
        fail(cat("unexpected key '", key, "'"));
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    if (!has_descr || !has_order || !has_shape) fail("expected the keys 'descr', 'fortran_order' and 'shape'");
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw IOError(cat(source_, ": malformed .npy header at character ", pos_, " of \"", text_, "\": ", what));
  }
  char peek() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!consume(c)) fail(cat("expected '", c, "'"));
  }
  bool consume_word(std::string_view word) {
    if (peek() == '\0' || text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  std::string string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    const size_t end = text_.find(quote, ++pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string out(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    if (consume_word("True")) return true;
    if (consume_word("False")) return false;
    fail("expected True or False");
  }
  int64_t integer() {
    peek();
    int64_t value = 0;
    const size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (value > (INT64_MAX - 9) / 10) fail("extent too large");
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) fail("expected a non-negative integer");
    consume('L');  // written by Python 2
    return value;
  }
  Shape tuple() {
    expect('(');
    Shape shape;
    while (!consume(')')) {
      shape.push_back(integer());
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
};

// Checks the magic string and version and parses the header of .npy bytes.
NpyFile parse_npy(std::string_view bytes, const std::string& source) {
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    throw IOError(cat(source, ": not a .npy file: expected the magic string \\x93NUMPY, found \"",
                      escaped(bytes.substr(0, kMagic.size())), "\""));
  }
  detail::ByteReader in(bytes, cat(source, ": .npy header"));
  in.take(kMagic.size());
  const auto major = in.get<uint8_t>(), minor = in.get<uint8_t>();
  size_t header_size = 0;
  if (major == 1) {
    header_size = in.get<uint16_t>();
  } else if (major == 2 || major == 3) {
    header_size = in.get<uint32_t>();
  } else {
    throw IOError(cat(source, ": unsupported .npy format version ", int{major}, ".", int{minor},
                      " (expected 1.0, 2.0 or 3.0)"));
  }
  NpyFile out = HeaderParser(in.take(header_size), source).parse();
  out.data = bytes.substr(in.position());
  return out;
}

// Splits a NumPy type string ('<f4') into byte order, kind and item size.
ElementType parse_descr(const std::string& descr, const std::string& source) {
  ElementType out;
  size_t pos = 0;
  if (!descr.empty() && std::string_view("<>|=").find(descr[0]) != std::string_view::npos) {
    out.big_endian = descr[0] == '>' || (descr[0] == '=' && kHostBigEndian);
    pos = 1;
  }
  const std::string digits = descr.size() > pos + 1 ? descr.substr(pos + 1) : "";
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), is_digit)) {
    throw IOError(cat(source, ": unsupported NumPy dtype '", descr, "'"));
  }
  out.kind = descr[pos];
  out.size = std::stoul(digits);
  return out;
}

// The kusari dtype of a NumPy element type; bfloat16 never ('<u2' is read as bfloat16 only when asked).
Dtype dtype_of_element(const ElementType& element, const std::string& descr, const std::string& source) {
  for (const DescrEntry& entry : kDescrs) {
    if (entry.dtype != Dtype::bfloat16 && entry.kind == element.kind && entry.size == element.size) {
      return entry.dtype;
    }
  }
  throw IOError(cat(source, ": unsupported NumPy dtype '", descr,
                    "' (expected one of <f2, <f4, <f8, <i4, <i8, |u1, |b1)"));
}

// Bytes of data the file must hold for `shape` with items of `size` bytes; throws on overflow.
uint64_t data_size(const Shape& shape, size_t size, const std::string& source) {
  uint64_t total = size;
  for (int64_t extent : shape) {
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(extent), &total)) {
      throw IOError(cat(source, ": shape ", shape, " in the .npy header is too large"));
    }
  }
  return total;
}

// Throws IOError unless the file holds exactly `expected` bytes after its header.
void require_data_size(const NpyFile& file, uint64_t expected, const std::string& source) {
  if (file.data.size() != expected) {
    throw IOError(cat(source, ": expected ", expected, " bytes of data for shape ", file.shape, " and dtype '",
                      file.descr, "', found ", file.data.size()));
  }
}

// Throws IOError unless every byte of a bool array's data is 0 or 1 (NumPy writes no other; any other
// byte would be an invalid bool in memory).
void require_bool_bytes(std::string_view data, const std::string& source) {
  for (size_t i = 0; i < data.size(); ++i) {
    const auto byte = static_cast<unsigned char>(data[i]);
    if (byte > 1) {
      throw IOError(cat(source, ": expected bool elements of byte 0 or 1, found ", static_cast<int>(byte),
                        " at element ", i));
    }
  }
}

// A .npy header (magic, version, length, dict padded to a multiple of 64 bytes) for C-order data.
std::string npy_header(const std::string& descr, const Shape& shape) {
  const std::string dict = cat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  const bool wide = dict.size() + 64 > UINT16_MAX;  // format 2.0 has a 4-byte length
  const size_t prefix = kMagic.size() + 2 + (wide ? 4 : 2);
  const size_t padding = (64 - (prefix + dict.size() + 1) % 64) % 64;
  const size_t header_size = dict.size() + padding + 1;
  std::string out(kMagic);
  out.push_back(static_cast<char>(wide ? 2 : 1));
  out.push_back(0);
  if (wide) {
    detail::put_le(out, static_cast<uint32_t>(header_size));
  } else {
    detail::put_le(out, static_cast<uint16_t>(header_size));
  }
  out += dict;
  out.append(padding, ' ');
  out.push_back('\n');
  return out;
}

}  // namespace

std::string npy_descr(Dtype dtype) {
  for (const DescrEntry& entry : kDescrs) {
    if (entry.dtype == dtype) return cat(entry.size == 1 ? '|' : '<', entry.kind, entry.size);
  }
  throw DtypeError(cat("npy_descr: no NumPy type string for dtype ", dtype));
}

std::string to_npy(const Array& array) {
  const Array host = array.to(Device::cpu()).contiguous();
  std::string out = npy_header(npy_descr(array.dtype()), array.shape());
  const size_t header_size = out.size(), nbytes = static_cast<size_t>(array.nbytes());
  out.resize(header_size + nbytes);
  if (nbytes == 0) return out;
  std::memcpy(out.data() + header_size, host.host_data(), nbytes);
  if (kHostBigEndian) swap_each(out.data() + header_size, array.size(), itemsize(array.dtype()));
  return out;
}

Array from_npy(std::string_view bytes, const std::string& source, std::optional<Dtype> stored_as) {
  const NpyFile file = parse_npy(bytes, source);
  const ElementType element = parse_descr(file.descr, source);
  Dtype dtype;
  if (stored_as) {
    if (element.kind == 'S' || element.size != itemsize(*stored_as)) {
      throw IOError(cat(source, ": expected elements of ", itemsize(*stored_as), " bytes holding ", *stored_as,
                        ", found NumPy dtype '", file.descr, "'"));
    }
    dtype = *stored_as;
  } else {
    dtype = dtype_of_element(element, file.descr, source);
  }
  require_data_size(file, data_size(file.shape, element.size, source), source);
  // Fortran-order data is the C-order data of the reversed shape, transposed.
  const auto& dims = file.shape.dims();
  const Shape layout = file.fortran_order ? Shape(std::vector<int64_t>(dims.rbegin(), dims.rend())) : file.shape;
  Array out = Array::empty(layout, dtype, Device::cpu());
  if (file.data.empty()) return out;
  if (dtype == Dtype::bool_) require_bool_bytes(file.data, source);
  std::memcpy(out.host_data(), file.data.data(), file.data.size());
  if (element.big_endian != kHostBigEndian) swap_each(static_cast<char*>(out.host_data()), out.size(), element.size);
  return file.fortran_order ? out.transpose().contiguous() : out;
}

std::string text_to_npy(std::string_view text) {
  const size_t width = std::max<size_t>(text.size(), 1);
  std::string out = npy_header(cat("|S", width), Shape{});
  out += text;
  out.append(width - text.size(), '\0');
  return out;
}

std::string text_from_npy(std::string_view bytes, const std::string& source) {
  const NpyFile file = parse_npy(bytes, source);
  const ElementType element = parse_descr(file.descr, source);
  if (element.kind != 'S' || file.shape.ndim() != 0) {
    throw IOError(cat(source, ": expected a 0-d byte string (NumPy dtype '|S<n>', shape ()), found dtype '",
                      file.descr, "' and shape ", file.shape));
  }
  require_data_size(file, element.size, source);
  std::string text(file.data);
  text.erase(text.find_last_not_of('\0') + 1);
  return text;
}

}  // namespace kusari::serializers
