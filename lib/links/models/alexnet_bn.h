#pragma once
// AlexNetBN: AlexNet with batch normalization instead of local response normalization.

#include <array>
#include <memory>

#include <kusari/core/api.h>
#include <kusari/links/batch_normalization.h>
#include <kusari/links/models/alexnet_base.h>
#include <kusari/links/models/normalization_config.h>

namespace kusari::links::models {

// AlexNetBase whose convolutions have no bias and are followed by batch normalization (bn1 ... bn5)
// and ReLU, with one more batch normalization (bn_pool5) on the output of the last pooling, as in the
// AlexNet-BN of Jia et al. (2018) and You et al. (2017). Every batch normalization is configured by a
// NormalizationConfig (zero_gamma does not apply: there is no residual branch).
class KUSARI_API AlexNetBN : public Cloneable<AlexNetBN, AlexNetBase> {
 public:
  // The network for n_classes classes, its batch normalizations configured by bn.
  explicit AlexNetBN(int64_t n_classes = 1000, const NormalizationConfig& bn = {});

 protected:
  Variable activate(int64_t index, const Variable& conv_output) override;
  Variable after_pool5(const Variable& h) override { return bn_pool5_->forward(h); }
  std::string type_name() const override { return "AlexNetBN"; }

 private:
  std::array<std::shared_ptr<BatchNormalization>, 5> bns_;
  std::shared_ptr<BatchNormalization> bn_pool5_;
};

}  // namespace kusari::links::models
