#pragma once
// Whether a text is one well-formed JSON value (RFC 8259) in UTF-8: what a reader of args.json must be
// able to parse, checked without a JSON library.

#include <cctype>
#include <cstdint>
#include <string>

namespace kusari::fuzz {

// A cursor over the text that answers whether the grammar holds from where it stands.
class JsonCheck {
 public:
  // A check of `text` (which must outlive it).
  explicit JsonCheck(const std::string& text) : text_(text) {}

  // True when the whole text is a single JSON value with optional surrounding white space.
  bool whole() {
    if (!value()) return false;
    space();
    return at_ == text_.size();
  }

 private:
  bool value() {
    space();
    if (at_ >= text_.size()) return false;
    const char c = text_[at_];
    if (c == '{') return members('}', true);
    if (c == '[') return members(']', false);
    if (c == '"') return string();
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return number();
    return word("true") || word("false") || word("null");
  }

  // An object (keyed) or an array after its opening bracket, up to `close`.
  bool members(char close, bool keyed) {
    ++at_;
    space();
    if (take(close)) return true;
    do {
      space();
      if (keyed && !(string() && (space(), take(':')))) return false;
      if (!value()) return false;
      space();
    } while (take(','));
    return take(close);
  }

  bool string() {
    if (!take('"')) return false;
    while (at_ < text_.size()) {
      const unsigned char c = text_[at_++];
      if (c == '"') return true;
      if (c < 0x20) return false;  // control characters must be escaped
      if (c >= 0x80 && !code_point(c)) return false;
      if (c != '\\') continue;
      if (at_ >= text_.size()) return false;
      const char e = text_[at_++];
      if (e == 'u') {
        for (int i = 0; i < 4; ++i) {
          if (at_ >= text_.size() || !std::isxdigit(static_cast<unsigned char>(text_[at_++]))) return false;
        }
      } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
        return false;
      }
    }
    return false;
  }

  // A multi-byte UTF-8 character whose first byte `lead` was just taken: its continuation bytes, and
  // a code point that needed that many bytes, is not a surrogate and is at most U+10FFFF.
  bool code_point(unsigned char lead) {
    int more = 0;
    uint32_t point = 0;
    if ((lead & 0xE0) == 0xC0) {
      more = 1, point = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      more = 2, point = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      more = 3, point = lead & 0x07;
    } else {
      return false;
    }
    for (int i = 0; i < more; ++i) {
      if (at_ >= text_.size() || (static_cast<unsigned char>(text_[at_]) & 0xC0) != 0x80) return false;
      point = point << 6 | (static_cast<unsigned char>(text_[at_++]) & 0x3F);
    }
    const uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
    return point >= smallest[more] && point <= 0x10FFFF && (point < 0xD800 || point > 0xDFFF);
  }

  bool number() {
    take('-');
    if (take('0')) {
    } else if (!digits()) {
      return false;
    }
    if (take('.') && !digits()) return false;
    if (take('e') || take('E')) {
      if (!take('+')) take('-');
      if (!digits()) return false;
    }
    return true;
  }

  bool digits() {
    const size_t start = at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    return at_ > start;
  }

  bool word(const char* w) {
    const std::string s(w);
    if (text_.compare(at_, s.size(), s) != 0) return false;
    at_ += s.size();
    return true;
  }

  bool take(char c) {
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  void space() {
    while (at_ < text_.size() && std::string(" \t\n\r").find(text_[at_]) != std::string::npos) ++at_;
  }

  const std::string& text_;
  size_t at_ = 0;
};

}  // namespace kusari::fuzz
