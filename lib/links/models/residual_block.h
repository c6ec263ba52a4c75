#pragma once
// ResidualBlock: y = relu(branch(x) + shortcut(x)), the unit of ResNets (He et al. 2016).

#include <cstdint>
#include <memory>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/links/chain.h>
#include <kusari/links/models/normalization_config.h>

namespace kusari::links::models {

// One convolution of a residual branch; each is followed by batch normalization (and ReLU but the last).
struct KUSARI_API BranchLayer {
  int64_t out_channels;
  int64_t ksize;  // square kernel, padded by ksize / 2 so only the stride changes the extent
  int64_t stride;
};

// The branch is conv1, bn1, relu, conv2, bn2, ... (convolutions without bias, He-normal initialised);
// the shortcut is x itself or, when the channels or extents change, shortcut_conv (1x1 with the
// branch's total stride) and shortcut_bn. Every batch normalization takes its settings from a
// NormalizationConfig, whose zero_gamma applies to the branch's last one only.
class KUSARI_API ResidualBlock : public Cloneable<ResidualBlock, Chain> {
 public:
  // A block on in_channels inputs with batch normalization configured by bn (bn.zero_gamma starts the
  // branch's last scale at 0, Goyal et al. 2017).
  ResidualBlock(int64_t in_channels, const std::vector<BranchLayer>& branch, const NormalizationConfig& bn);
  // Two 3x3 convolutions, the first with `stride` (the block of the CIFAR ResNets).
  static std::shared_ptr<ResidualBlock> basic(int64_t in_channels, int64_t out_channels, int64_t stride,
                                              const NormalizationConfig& bn);
  // 1x1 to `width`, 3x3 with `stride`, 1x1 to 4 * width (ResNet-50's block, stride on the 3x3).
  static std::shared_ptr<ResidualBlock> bottleneck(int64_t in_channels, int64_t width, int64_t stride,
                                                   const NormalizationConfig& bn);
  // relu(branch(x) + shortcut(x)).
  Variable forward(const Variable& x) override;

 protected:
  std::string type_name() const override { return "ResidualBlock"; }

 private:
  int64_t depth_;
  bool projection_;
};

}  // namespace kusari::links::models
