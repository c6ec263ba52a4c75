#pragma once
// CLI11 validators of the command-line programs (the recipes, tools/ and bench/, the libtorch twins
// included: nothing here needs the library), whose refusal says what was expected and what came:
// "--ranks: expected an integer >= 1, got 'abc'".

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kusari::flags {

// The whole of `text` as an integer, if it is one.
inline std::optional<long long> whole_integer(const std::string& text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || text.empty()) return std::nullopt;
  return value;
}

// The whole of `text` as a finite number, if it is one.
inline std::optional<double> finite_number(const std::string& text) {
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

// Accepts a whole integer >= 1 ("12x", "0" and "-3" are refused).
inline CLI::Validator positive_integer() {
  return validator("an integer >= 1", [](const std::string& v) { return whole_integer(v).value_or(0) >= 1; });
}

// Accepts a whole integer >= 0.
inline CLI::Validator nonnegative_integer() {
  return validator("an integer >= 0", [](const std::string& v) { return whole_integer(v).value_or(-1) >= 0; });
}

// Accepts a finite number > 0.
inline CLI::Validator positive_number() {
  return validator("a number > 0", [](const std::string& v) { return finite_number(v).value_or(0) > 0; });
}

// Accepts a finite number >= 0.
inline CLI::Validator nonnegative_number() {
  return validator("a number >= 0", [](const std::string& v) { return finite_number(v).value_or(-1) >= 0; });
}

// Accepts a whole integer in [low, high].
inline CLI::Validator integer_between(long long low, long long high) {
  return validator("an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]",
                   [low, high](const std::string& v) {
                     const std::optional<long long> n = whole_integer(v);
                     return n && *n >= low && *n <= high;
                   });
}

// Accepts a finite number in [0, 1).
inline CLI::Validator unit_interval() {
  return validator("a number in [0, 1)", [](const std::string& v) {
    const double x = finite_number(v).value_or(-1);
    return x >= 0 && x < 1;
  });
}

// Accepts one of `choices` exactly.
inline CLI::Validator one_of(const std::vector<std::string>& choices) {
  std::string form = "one of";
  for (const std::string& choice : choices) form += (form == "one of" ? " " : "|") + choice;
  return validator(form, [choices](const std::string& v) {
    return std::find(choices.begin(), choices.end(), v) != choices.end();
  });
}

}  // namespace kusari::flags
