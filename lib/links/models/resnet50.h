#pragma once
// ResNet50: the 50-layer ImageNet network of He et al. (2016).

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/links/models/residual_network.h>

namespace kusari::links::models {

// A 7x7/2 convolution to 64 channels with batch normalization and ReLU, a 3x3/2 max pooling, four
// stages of 3, 4, 6 and 3 bottleneck blocks of widths 64, 128, 256 and 512 (outputs four times as wide;
// the stride 2 of stages 2-4 sits on the first block's 3x3 convolution; the first block of each stage
// has a projection shortcut), global average pooling and a linear layer from 2048 to n_classes.
// 25,557,032 parameters for 1000 classes.
class KUSARI_API ResNet50 : public Cloneable<ResNet50, ResidualNetwork> {
 public:
  // Every batch normalization is configured by bn (bn.zero_gamma starts the last scale of every
  // residual branch at 0, Goyal et al. 2017).
  explicit ResNet50(int64_t n_classes = 1000, const NormalizationConfig& bn = {});

 protected:
  std::string type_name() const override { return "ResNet50"; }
};

}  // namespace kusari::links::models
