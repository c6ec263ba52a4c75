#pragma once
// ResNet: the CIFAR-style residual networks of He et al. (2016), section 4.2.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/links/models/residual_network.h>

namespace kusari::links::models {

// A 3x3 convolution to 16 channels with batch normalization and ReLU, then three stages of
// (depth - 2) / 6 basic blocks with 16, 32 and 64 channels (stride 2 at the start of the second and
// third), global average pooling and a linear layer from 64 to n_classes. Depth 20, 32, 56, 110, ...
class KUSARI_API ResNet : public Cloneable<ResNet, ResidualNetwork> {
 public:
  // depth = 6n + 2; every batch normalization is configured by bn (bn.zero_gamma starts the last scale
  // of every residual branch at 0).
  explicit ResNet(int64_t depth = 20, int64_t in_channels = 3, int64_t n_classes = 10,
                  const NormalizationConfig& bn = {});

 protected:
  std::string type_name() const override { return "ResNet"; }
};

}  // namespace kusari::links::models
