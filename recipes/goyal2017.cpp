// goyal2017: "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour" (Goyal et al. 2017) —
// ResNet-50, linear scaling of lr = 0.1·B/256, gradual warm-up over 5 epochs, ÷10 at epochs 30, 60
// and 80 of 90, zero-γ in the last BN of every residual block, momentum correction, BN over each
// GPU's 32 images. Reported: 256 P100, B = 8192, 1 hour, 76.3% top-1.

#include "common/step_sgd_recipe.h"
#include "papers.h"

namespace kusari::recipes {

// The paper's defaults throughout (StepSgdDefaults and goyal_settings are Goyal's values).
class Goyal2017 : public StepSgdRecipe {
 public:
  Goyal2017()
      : StepSgdRecipe("goyal2017", "Goyal et al. 2017: large-minibatch momentum SGD, linear scaling, gradual warm-up",
                      StepSgdDefaults{}) {}
  Settings defaults(Preset preset, const std::string&) const override { return goyal_settings(preset); }
};

std::unique_ptr<Recipe> make_goyal2017(int, char**) { return std::make_unique<Goyal2017>(); }

}  // namespace kusari::recipes
