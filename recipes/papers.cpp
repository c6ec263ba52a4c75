#include "papers.h"

#include <stdexcept>

namespace kusari::recipes {
namespace {

using Factory = std::unique_ptr<Recipe> (*)(int, char**);

// The names in recipe_names() order, with their factories.
const std::vector<std::pair<std::string, Factory>>& factories() {
  static const std::vector<std::pair<std::string, Factory>> all = {
      {"fashion_mnist", make_fashion_mnist}, {"goyal2017", make_goyal2017}, {"akiba2017", make_akiba2017},
      {"jia2018", make_jia2018},             {"kumar2017", make_kumar2017}};
  return all;
}

}  // namespace

const std::vector<std::string>& recipe_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : factories()) out.push_back(entry.first);
    return out;
  }();
  return names;
}

std::unique_ptr<Recipe> make_recipe(const std::string& name, int argc, char** argv) {
  std::string known;
  for (const auto& [candidate, factory] : factories()) {
    if (candidate == name) return factory(argc, argv);
    known += (known.empty() ? "" : ", ") + candidate;
  }
  throw std::invalid_argument("no recipe named '" + name + "' (expected one of " + known + ")");
}

}  // namespace kusari::recipes
