// log_from_json: reads back what LogReport writes.

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <kusari/core/error.h>
#include <kusari/training/log_report.h>

namespace kusari::training {
namespace {

// A cursor over the JSON text that throws on anything but the expected.
class LogParser {
 public:
  explicit LogParser(const std::string& text) : text_(text) {}

  std::vector<Observation> entries() {
    std::vector<Observation> log;
    expect('[');
    if (!take(']')) {
      do log.push_back(entry());
      while (take(','));
      expect(']');
    }
    skip_space();
    if (at_ < text_.size()) fail("the end of the log");
    return log;
  }

 private:
  Observation entry() {
    Observation values;
    expect('{');
    if (take('}')) return values;
    do {
      std::string key = string();
      expect(':');
      values[key] = number();
    } while (take(','));
    expect('}');
    return values;
  }

  std::string string() {
    expect('"');
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      if (text_[at_] == '\\' && at_ + 1 < text_.size()) {
        out += escaped_character();
        continue;
      }
      out += text_[at_++];
    }
    if (at_ >= text_.size()) fail("a closing '\"'");
    ++at_;
    return out;
  }

  // The character of the escape at at_ (\\n, \\t, \\uXXXX below 0x80, or the escaped character itself).
  char escaped_character() {
    const char kind = text_[++at_];
    ++at_;
    if (kind == 'n') return '\n';
    if (kind == 't') return '\t';
    if (kind != 'u') return kind;
    if (at_ + 4 > text_.size()) fail("four hex digits");
    const std::string hex = text_.substr(at_, 4);
    char* end = nullptr;
    const long code = std::strtol(hex.c_str(), &end, 16);
    if (end != hex.c_str() + 4 || code >= 0x80) fail("an escape below \\u0080");
    at_ += 4;
    return static_cast<char>(code);
  }

  double number() {
    skip_space();
    for (const auto& [word, value] : {std::pair<const char*, double>{"NaN", std::numeric_limits<double>::quiet_NaN()},
                                      {"Infinity", std::numeric_limits<double>::infinity()},
                                      {"-Infinity", -std::numeric_limits<double>::infinity()}}) {
      if (text_.compare(at_, std::char_traits<char>::length(word), word) == 0) {
        at_ += std::char_traits<char>::length(word);
        return value;
      }
    }
    const char* begin = text_.c_str() + at_;
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(begin, &end);
    if (end == begin || (errno == ERANGE && std::isinf(value))) fail("a finite number");  // underflow is fine
    at_ += static_cast<size_t>(end - begin);
    return value;
  }

  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(cat("'", c, "'"));
  }
  [[noreturn]] void fail(const std::string& expected) const {
    const std::string came = at_ < text_.size() ? cat("'", text_.substr(at_, 12), "'") : "the end of the text";
    throw ValueError(cat("log_from_json: expected ", expected, " at offset ", at_, ", got ", came));
  }

  const std::string& text_;
  size_t at_ = 0;
};

}  // namespace

std::vector<Observation> log_from_json(const std::string& text) { return LogParser(text).entries(); }

}  // namespace kusari::training
