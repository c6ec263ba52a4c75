// fashion_mnist: the default command — an MLP (or ResNet-20, 32 or 56) on Fashion-MNIST, data-parallel over the
// ranks of `mpiexec -n P` as ChainerMN's MNIST example: momentum SGD at lr = lr_base·B/256 dropped
// tenfold for the last third, batch normalization over the global batch, a progress bar, per-epoch
// evaluation, JSON log, SVG plots and snapshots.

#include "common/flags.h"
#include "common/step_sgd_recipe.h"
#include "papers.h"

namespace kusari::recipes {

// Momentum SGD as the MNIST examples run it: no warm-up, one drop at 2/3 of the epochs, weight decay
// (ResNet only) sparing biases and batch-normalization parameters. lr_base gives lr 0.05 at the MLP's
// B = 200 and 0.1 at the ResNets' B = 256.
StepSgdDefaults mnist_sgd(bool mlp) {
  return {.lr_base = mlp ? 0.064 : 0.1, .weight_decay = mlp ? 0 : 5e-4, .decay_bias_and_bn = false,
          .warmup_epochs = {0}, .milestones = {60}, .momentum_correction = false, .fashion_mnist_warmup_epochs = {},
          .fashion_mnist_milestones = {}};
}

class FashionMnist : public StepSgdRecipe {
 public:
  explicit FashionMnist(const std::string& model)
      : StepSgdRecipe("fashion_mnist",
                      "Fashion-MNIST, MLP or ResNet-20/32/56, data-parallel, BN over the global batch",
                      mnist_sgd(model == "mlp")) {}
  Preset default_preset() const override { return Preset::fashion_mnist; }
  Settings defaults(Preset preset, const std::string& model) const override {
    if (preset != Preset::fashion_mnist) {
      throw FlagError{"--preset: expected fashion_mnist (the only preset of this command), got imagenet"};
    }
    Settings s = preset_settings(Preset::fashion_mnist);
    // The ResNets' defaults for any other --model; check_settings refuses those made for ImageNet.
    const bool mlp = model.empty() || model == "mlp";
    s.model = mlp ? "mlp" : model;
    s.batchsize = mlp ? 200 : 256;
    s.epoch = mlp ? 10 : 15;
    s.bn = "multi_node";
    s.bn_batch = 0;
    return s;
  }
};

std::unique_ptr<Recipe> make_fashion_mnist(int argc, char** argv) {
  return std::make_unique<FashionMnist>(prescan_flag(argc, argv, "--model", "mlp"));
}

}  // namespace kusari::recipes
