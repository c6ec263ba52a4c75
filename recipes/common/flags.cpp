#include "flags.h"

#include <charconv>
#include <functional>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

namespace kusari::recipes {
namespace {

// The whole of `text` as an integer, if it is one.
std::optional<long long> whole_integer(const std::string& text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || text.empty()) return std::nullopt;
  return value;
}

// The whole of `text` as a finite number, if it is one.
std::optional<double> finite_number(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || text.empty() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A validator named `form` that refuses values `accept` rejects, saying what was expected and what came.
template <class Accept>
CLI::Validator validator(const std::string& form, Accept accept) {
  return CLI::Validator(
      [form, accept](std::string& value) -> std::string {
        if (accept(value)) return "";
        return "expected " + form + ", got '" + value + "'";
      },
      form);
}

// The length of the well-formed UTF-8 sequence at `at` in `text` (1 to 4 bytes), or 0 if none starts
// there (a stray continuation byte, an overlong form, a surrogate, a code point past U+10FFFF).
size_t utf8_length(const std::string& text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  const size_t length = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
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

// `text` as a JSON string: quotes and backslashes escaped, control characters as \u00XX, and each byte
// that is not part of well-formed UTF-8 (a file name in another encoding) as \udcXX, the lone surrogate
// that Python's json and os.fsencode turn back into that byte.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  char escaped[8];
  for (size_t at = 0; at < text.size();) {
    const auto c = static_cast<unsigned char>(text[at]);
    const size_t length = utf8_length(text, at);
    if (length == 0 || c < 0x20) {
      std::snprintf(escaped, sizeof escaped, "\\u%04x", length == 0 ? 0xDC00 + c : c);
      out += escaped;
      ++at;
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out.append(text, at, length);
    at += length;
  }
  return out + "\"";
}

// A flag's value in JSON: a text option's as a string; a number as JSON writes it (CLI11 also takes
// "5.", ".5" and "007"); a switch's true or false bare.
std::string json_value(const std::string& text, bool is_text) {
  if (is_text) return json_string(text);
  if (text == "true" || text == "false") return text;
  if (const std::optional<long long> integer = whole_integer(text)) return std::to_string(*integer);
  if (const std::optional<double> number = finite_number(text)) {
    char shortest[32];
    const auto written = std::to_chars(shortest, shortest + sizeof shortest, *number);
    return std::string(shortest, written.ptr);
  }
  return json_string(text);
}

}  // namespace

CLI::Validator positive_integer() {
  return validator("an integer >= 1", [](const std::string& v) { return whole_integer(v).value_or(0) >= 1; });
}

CLI::Validator nonnegative_integer() {
  return validator("an integer >= 0", [](const std::string& v) { return whole_integer(v).value_or(-1) >= 0; });
}

CLI::Validator positive_number() {
  return validator("a number > 0", [](const std::string& v) { return finite_number(v).value_or(0) > 0; });
}

CLI::Validator nonnegative_number() {
  return validator("a number >= 0", [](const std::string& v) { return finite_number(v).value_or(-1) >= 0; });
}

CLI::Validator unit_interval() {
  return validator("a number in [0, 1)", [](const std::string& v) {
    const double x = finite_number(v).value_or(-1);
    return x >= 0 && x < 1;
  });
}

CLI::Validator one_of(const std::vector<std::string>& choices) {
  std::string form = "one of";
  for (const std::string& choice : choices) form += (form == "one of" ? " " : "|") + choice;
  return validator(form, [choices](const std::string& v) {
    return std::find(choices.begin(), choices.end(), v) != choices.end();
  });
}

CLI::Option* add_switch(CLI::App& app, const std::string& name, bool& value, const std::string& description) {
  const std::string shown = value ? "true" : "false";
  return app.add_flag("--" + name + ",!--no-" + name, value, description + " (default " + shown + ")")
      ->default_str(shown);
}

void require_increasing(const std::vector<double>& values, const std::string& flag) {
  if (std::adjacent_find(values.begin(), values.end(), std::greater_equal<>()) == values.end()) return;
  std::ostringstream given;
  for (size_t i = 0; i < values.size(); ++i) given << (i ? "," : "") << values[i];
  throw FlagError{flag + ": expected strictly increasing epochs, got " + given.str()};
}

bool parse_flags(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& error) {
    throw FlagError{app.get_name() + ": " + error.what() + "\n(" + app.get_name() + " --help lists every flag)"};
  }
}

std::string prescan_flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  std::string value = fallback;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == name && i + 1 < argc) value = argv[i + 1];
    if (arg.rfind(name + "=", 0) == 0) value = arg.substr(name.size() + 1);
  }
  return value;
}

std::string flags_to_json(const CLI::App& app) {
  std::ostringstream out;
  out << "{";
  bool first = true;
  for (const CLI::Option* option : app.get_options()) {
    const std::string name = option->get_single_name();
    if (name == "help" || name == "h" || option->get_lnames().empty()) continue;
    const std::vector<std::string> given = option->results();
    const std::vector<std::string> values =
        given.empty() ? std::vector<std::string>{option->get_default_str()} : given;
    out << (first ? "\n  " : ",\n  ") << json_string(option->get_lnames().front()) << ": ";
    first = false;
    const bool list = option->get_items_expected_max() > 1 || option->get_expected_max() > 1;
    const bool text = option->get_type_name().rfind("TEXT", 0) == 0;  // CLI11 names a string option's type so
    if (!list) {
      out << json_value(values.back(), text);
      continue;
    }
    out << "[";
    for (size_t i = 0; i < values.size(); ++i) {
      std::string item = values[i];
      if (!item.empty() && item.front() == '[') item = item.substr(1, item.size() - 2);  // a default "[a,b]"
      std::stringstream parts(item);
      std::string part;
      bool first_part = i == 0;
      while (std::getline(parts, part, ',')) {
        out << (first_part ? "" : ", ") << json_value(part, text);
        first_part = false;
      }
    }
    out << "]";
  }
  out << "\n}\n";
  return out.str();
}

}  // namespace kusari::recipes
