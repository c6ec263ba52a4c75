#include <kusari/links/models/resnet50.h>

#include <kusari/links/models/residual_block.h>

namespace kusari::links::models {
namespace {

// The bottleneck stages res2 ... res5 with their block counts and widths.
std::vector<std::shared_ptr<Sequential>> bottleneck_stages(const NormalizationConfig& bn) {
  struct Spec {
    int64_t blocks, width, stride;
  };
  std::vector<std::shared_ptr<Sequential>> stages;
  int64_t in_channels = 64;
  for (const Spec& spec : {Spec{3, 64, 1}, Spec{4, 128, 2}, Spec{6, 256, 2}, Spec{3, 512, 2}}) {
    stages.push_back(residual_stage(spec.blocks, [&](int64_t i) {
      return ResidualBlock::bottleneck(i == 0 ? in_channels : 4 * spec.width, spec.width, i == 0 ? spec.stride : 1,
                                       bn);
    }));
    in_channels = 4 * spec.width;
  }
  return stages;
}

}  // namespace

ResNet50::ResNet50(int64_t n_classes, const NormalizationConfig& bn)
    : Cloneable(Convolution2DOptions(3, 64, 7).stride(2).pad(3), bn, true, bottleneck_stages(bn), 2048, n_classes) {}

}  // namespace kusari::links::models
