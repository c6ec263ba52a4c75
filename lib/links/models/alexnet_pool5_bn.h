#pragma once
// AlexNetPool5BN: AlexNet with one batch normalization, after pool5 (Jia et al. 2018).

#include <cstdint>
#include <memory>

#include <kusari/core/api.h>
#include <kusari/links/batch_normalization.h>
#include <kusari/links/models/alexnet_base.h>
#include <kusari/links/models/normalization_config.h>

namespace kusari::links::models {

// AlexNetBase with biased convolutions each followed by ReLU, no local response normalization, and a
// single batch normalization, bn_pool5, on the output of the last max pooling: the "AlexNet with BN
// after pool5" of Jia et al. (2018).
class KUSARI_API AlexNetPool5BN : public Cloneable<AlexNetPool5BN, AlexNetBase> {
 public:
  // The network for n_classes classes, bn_pool5 configured by bn.
  explicit AlexNetPool5BN(int64_t n_classes = 1000, const NormalizationConfig& bn = {});

 protected:
  Variable activate(int64_t index, const Variable& conv_output) override;
  Variable after_pool5(const Variable& h) override { return bn_pool5_->forward(h); }
  std::string type_name() const override { return "AlexNetPool5BN"; }

 private:
  std::shared_ptr<BatchNormalization> bn_pool5_;
};

}  // namespace kusari::links::models
