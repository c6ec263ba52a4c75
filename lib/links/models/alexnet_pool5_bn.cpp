#include <kusari/links/models/alexnet_pool5_bn.h>

#include <kusari/functions/activation.h>

namespace kusari::links::models {

AlexNetPool5BN::AlexNetPool5BN(int64_t n_classes, const NormalizationConfig& bn)
    : Cloneable(n_classes, true), bn_pool5_(std::make_shared<BatchNormalization>(bn.options(256))) {
  add_link("bn_pool5", bn_pool5_);
}

Variable AlexNetPool5BN::activate(int64_t, const Variable& conv_output) { return functions::relu(conv_output); }

}  // namespace kusari::links::models
