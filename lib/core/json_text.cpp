#include <kusari/core/json_text.h>

#include <charconv>
#include <cmath>
#include <cstdio>

namespace kusari {
namespace {

// The length of the well-formed UTF-8 sequence at `at` in `text` (1 to 4 bytes), or 0 if none starts
// there (a stray continuation byte, an overlong form, a surrogate, a code point past U+10FFFF).
size_t utf8_length(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  const size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                        : lead >= 0xE0 && lead <= 0xEF ? 3
                        : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                       : 0;
  if (length == 0 || at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
  }
  const unsigned char second = byte(at + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) || (lead == 0xF0 && second < 0x90) ||
      (lead == 0xF4 && second > 0x8F)) {
    return 0;
  }
  return length;
}

// The two-character escape Python's json module writes for `c` (quote, backslash, \b \f \n \r \t), or null.
const char* short_escape(unsigned char c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return nullptr;
  }
}

}  // namespace

std::string json_string(std::string_view text) {
  std::string out = "\"";
  char escaped[8];
  for (size_t at = 0; at < text.size();) {
    const auto c = static_cast<unsigned char>(text[at]);
    const size_t length = utf8_length(text, at);
    if (const char* short_form = short_escape(c)) {
      out += short_form;
      ++at;
      continue;
    }
    if (length == 0 || c < 0x20) {
      std::snprintf(escaped, sizeof escaped, "\\u%04x", length == 0 ? 0xDC00 + c : c);
      out += escaped;
      ++at;
      continue;
    }
    out.append(text, at, length);
    at += length;
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buffer[32];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, written.ptr);
}

}  // namespace kusari
