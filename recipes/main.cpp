// The main() of every recipe executable: KUSARI_RECIPE (set by the build) names the recipe it runs.

#include "papers.h"

int main(int argc, char** argv) {
  return kusari::recipes::run_recipe(argc, argv, *kusari::recipes::make_recipe(KUSARI_RECIPE, argc, argv));
}
