#include <kusari/links/models/alexnet_bn.h>

#include <kusari/functions/activation.h>

namespace kusari::links::models {

AlexNetBN::AlexNetBN(int64_t n_classes, const NormalizationConfig& bn) : Cloneable(n_classes, false) {
  constexpr std::array<int64_t, 5> channels{96, 256, 384, 384, 256};
  for (size_t i = 0; i < bns_.size(); ++i) {
    bns_[i] = std::make_shared<BatchNormalization>(bn.options(channels[i]).activation(functions::Activation::relu));
    add_link("bn" + std::to_string(i + 1), bns_[i]);
  }
  bn_pool5_ = std::make_shared<BatchNormalization>(bn.options(256));
  add_link("bn_pool5", bn_pool5_);
}

Variable AlexNetBN::activate(int64_t index, const Variable& conv_output) {
  return bns_[static_cast<size_t>(index)]->forward(conv_output);  // relu(bn(·)), fused
}

}  // namespace kusari::links::models
