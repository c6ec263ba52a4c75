#pragma once
// Flag parsing for the recipes (CLI11, with the validators of flag_validators.h): switches, args.json,
// and the parse that turns a bad command line into exit status 2.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "flag_validators.h"

namespace kusari::recipes {

// A command line that cannot start a run: the message says what was expected and what came.
struct FlagError {
  std::string message;  // printed to stderr
};

// The validators (flag_validators.h), by their names here too.
using flags::nonnegative_integer;
using flags::nonnegative_number;
using flags::one_of;
using flags::positive_integer;
using flags::positive_number;
using flags::unit_interval;

// Adds the option `names` ("-b,--batchsize") bound to `value`, checked by `validator`, its current
// value shown as the default by --help and written to args.json when not given.
template <class T>
CLI::Option* add_value(CLI::App& app, const std::string& names, T& value, const std::string& description,
                       const CLI::Validator& validator) {
  return app.add_option(names, value, description)->check(validator)->capture_default_str();
}

// Adds the switch --`name` with its negation --no-`name` bound to `value`, whose current value is the
// default shown by --help and written to args.json.
CLI::Option* add_switch(CLI::App& app, const std::string& name, bool& value, const std::string& description);

// Throws FlagError naming `flag` and the values unless `values` increase strictly.
void require_increasing(const std::vector<double>& values, const std::string& flag);

// Parses argv into the options bound to `app`. Returns false after printing the help for --help/-h or
// the version for --version;
// throws FlagError for an unknown flag, a missing value or a value its validator refuses.
bool parse_flags(CLI::App& app, int argc, char** argv);

// The value of the long flag `name` ("--preset") in argv when given (the last one, as the parse takes),
// else `fallback`: read before the full parse, for flags whose value changes other flags' defaults.
std::string prescan_flag(int argc, char** argv, const std::string& name, const std::string& fallback);

// Every option of `app` with the value it ran with (given on the command line, else its default), as
// a JSON object keyed by long flag name without dashes: numbers and booleans bare, lists as arrays.
std::string flags_to_json(const CLI::App& app);

}  // namespace kusari::recipes
