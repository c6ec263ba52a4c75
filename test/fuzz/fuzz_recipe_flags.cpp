// libFuzzer target: the recipes' command lines. The first byte picks the recipe, the rest are its
// arguments, one per line. A command line either parses into settings whose args.json is well-formed
// JSON, or is refused with a FlagError (exit status 2 in the executables); any other exception would
// end a recipe with std::terminate and is a finding.

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "../../recipes/common/command_line.h"
#include "../../recipes/common/flags.h"
#include "../../recipes/papers.h"
#include "json_check.h"

using namespace kusari::recipes;

// --help prints to stdout, which is not wanted here (libFuzzer reports on stderr).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::cout.rdbuf(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string& name = recipe_names()[data[0] % recipe_names().size()];
  std::vector<std::string> args{name};
  std::stringstream lines(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  for (std::string line; std::getline(lines, line);) args.push_back(line);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(args.size());
  try {
    std::unique_ptr<Recipe> recipe = make_recipe(name, argc, argv.data());
    const std::optional<CommandLine> line = parse_command_line(argc, argv.data(), *recipe);
    if (line && !kusari::fuzz::JsonCheck(line->args_json).whole()) {
      std::cerr << "args.json is not well-formed JSON:\n" << line->args_json;
      std::abort();
    }
  } catch (const FlagError&) {
  }
  return 0;
}
