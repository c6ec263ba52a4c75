#include "flags.h"

#include <charconv>
#include <functional>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <regex>
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

// Whether `text` is a number as JSON writes one (no leading '+', '.', zeros or trailing '.').
bool is_json_number(const std::string& text) {
  static const std::regex form(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
  return std::regex_match(text, form);
}

// `text` as a JSON string: quotes and backslashes escaped, control characters as \u00XX.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A flag's value in JSON: booleans and numbers bare (a number CLI11 took in another form, "5." or
// "1E3", in its shortest round-trip form), anything else a string.
std::string json_value(const std::string& text) {
  if (text == "true" || text == "false" || is_json_number(text)) return text;
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
    if (!list) {
      out << json_value(values.back());
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
        out << (first_part ? "" : ", ") << json_value(part);
        first_part = false;
      }
    }
    out << "]";
  }
  out << "\n}\n";
  return out.str();
}

}  // namespace kusari::recipes
