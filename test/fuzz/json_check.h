#pragma once
// Whether a text is one well-formed JSON value (RFC 8259): what a reader of args.json must be able to
// parse, checked without a JSON library.

#include <cctype>
#include <string>

namespace kusari::fuzz {

// A cursor over the text that answers whether the grammar holds from where it stands.
class JsonCheck {
 public:
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
