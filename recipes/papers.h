#pragma once
// The papers' recipes by name: what each executable runs, and what the tests and the flag-parser fuzz
// target take without starting one.

#include <memory>
#include <string>
#include <vector>

#include "common/recipe.h"

namespace kusari::recipes {

// The default command, for the command line `argv` (its defaults follow its --model).
std::unique_ptr<Recipe> make_fashion_mnist(int argc, char** argv);
// Goyal et al. 2017 (argv unused).
std::unique_ptr<Recipe> make_goyal2017(int argc, char** argv);
// Akiba et al. 2017 (argv unused).
std::unique_ptr<Recipe> make_akiba2017(int argc, char** argv);
// Jia et al. 2018 (argv unused).
std::unique_ptr<Recipe> make_jia2018(int argc, char** argv);
// Kumar et al. 2017 (argv unused).
std::unique_ptr<Recipe> make_kumar2017(int argc, char** argv);

// The executables' names, the default command first.
const std::vector<std::string>& recipe_names();

// The recipe named `name` (one of recipe_names()) for the command line `argv`; throws
// std::invalid_argument naming the names for any other.
std::unique_ptr<Recipe> make_recipe(const std::string& name, int argc, char** argv);

}  // namespace kusari::recipes
