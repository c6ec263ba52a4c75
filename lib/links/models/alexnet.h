#pragma once
// AlexNet: Krizhevsky et al. (2012) with local response normalization.

#include <kusari/core/api.h>
#include <kusari/links/models/alexnet_base.h>

namespace kusari::links::models {

// AlexNetBase with ReLU after every convolution and local response normalization (n 5, k 2, alpha 1e-4,
// beta 0.75) after the first two, as in the paper and Chainer's example.
class KUSARI_API AlexNet : public Cloneable<AlexNet, AlexNetBase> {
 public:
  // The network for n_classes classes.
  explicit AlexNet(int64_t n_classes = 1000) : Cloneable(n_classes, true) {}

 protected:
  Variable activate(int64_t index, const Variable& conv_output) override;
  std::string type_name() const override { return "AlexNet"; }
};

}  // namespace kusari::links::models
