// kumar2017: "Efficient Training of Convolutional Neural Nets on Large Distributed Systems" (Kumar et
// al. 2017) — each rank keeps its shard of the data set in memory (the compressed files, or decoded
// with --cache-decoded S) and reshuffles it every epoch, gradients are averaged by the multi-color
// all-reduce (with a reduce-scatter inside each node before and an all-gather after), and the
// optimizer is Goyal et al.'s. Reported: 256 P100, ResNet-50, 90 epochs in 48 minutes, 75.4% top-1.

#include "common/step_sgd_recipe.h"
#include "papers.h"

namespace kusari::recipes {

// Goyal's optimizer and settings with in-memory shards and the multi-color all-reduce.
class Kumar2017 : public StepSgdRecipe {
 public:
  Kumar2017()
      : StepSgdRecipe("kumar2017", "Kumar et al. 2017: in-memory sharded data, multi-color all-reduce, Goyal's SGD",
                      StepSgdDefaults{}) {}
  Settings defaults(Preset preset, const std::string&) const override {
    Settings s = goyal_settings(preset);
    s.communicator = "multi_color";
    s.in_memory = "compressed";
    return s;
  }
};

std::unique_ptr<Recipe> make_kumar2017(int, char**) { return std::make_unique<Kumar2017>(); }

}  // namespace kusari::recipes
