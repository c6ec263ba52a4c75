#include "flags.h"

#include <charconv>
#include <functional>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include <kusari/core/json_text.h>

namespace kusari::recipes {
namespace {

// A flag's value in JSON: a text option's as a string; a number as JSON writes it (CLI11 also takes
// "5.", ".5" and "007"); a switch's true or false bare.
std::string json_value(const std::string& text, bool is_text) {
  if (is_text) return json_string(text);
  if (text == "true" || text == "false") return text;
  if (const std::optional<long long> integer = flags::whole_integer(text)) return std::to_string(*integer);
  if (const std::optional<double> number = flags::finite_number(text)) return json_number(*number);
  return json_string(text);
}

}  // namespace

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
  } catch (const CLI::CallForVersion& version) {
    std::cout << version.what() << "\n";
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
    // Hidden options (group "") are aliases whose effect the option they stand for records.
    if (option == app.get_help_ptr() || option == app.get_version_ptr() || option->get_lnames().empty() ||
        option->get_group().empty()) {
      continue;
    }
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
