#include <kusari/links/models/resnet.h>

#include <kusari/links/models/residual_block.h>

namespace kusari::links::models {
namespace {

// Three stages of basic blocks with 16, 32 and 64 channels; the last two halve the extents.
std::vector<std::shared_ptr<Sequential>> cifar_stages(int64_t depth, const NormalizationConfig& bn) {
  if (depth < 8 || (depth - 2) % 6 != 0) {
    throw ValueError(cat("ResNet: expected a depth 6n + 2 with n >= 1 (20, 32, 56, ...), got ", depth));
  }
  std::vector<std::shared_ptr<Sequential>> stages;
  int64_t in_channels = 16;
  for (const int64_t width : {16, 32, 64}) {
    const int64_t stride = width == 16 ? 1 : 2;
    stages.push_back(residual_stage((depth - 2) / 6, [&](int64_t i) {
      return ResidualBlock::basic(i == 0 ? in_channels : width, width, i == 0 ? stride : 1, bn);
    }));
    in_channels = width;
  }
  return stages;
}

}  // namespace

ResNet::ResNet(int64_t depth, int64_t in_channels, int64_t n_classes, const NormalizationConfig& bn)
    : Cloneable(Convolution2DOptions(in_channels, 16, 3).pad(1), bn, false, cifar_stages(depth, bn), 64, n_classes) {}

}  // namespace kusari::links::models
