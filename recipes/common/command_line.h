#pragma once
// The command line of a recipe: its flags parsed into the run's settings and recorded as args.json.

#include <optional>
#include <string>

#include "recipe.h"
#include "settings.h"

namespace kusari::recipes {

// A parsed command line: the settings and the flags as JSON.
struct CommandLine {
  Settings settings;      // what the run loop runs with
  std::string args_json;  // every flag with the value it ran with (written to args.json)
};

// Parses argv for `recipe` (binding its own flags into it) and checks the combination; empty after
// --help. Throws FlagError saying what was expected and what came.
std::optional<CommandLine> parse_command_line(int argc, char** argv, Recipe& recipe);

}  // namespace kusari::recipes
