#include <kusari/links/models/residual_block.h>

#include <kusari/functions/activation.h>
#include <kusari/links/batch_normalization.h>
#include <kusari/links/convolution_2d.h>
#include <kusari/links/initializers.h>

namespace kusari::links::models {
namespace {

// A convolution without bias (batch normalization follows), He-normal initialised.
std::shared_ptr<Convolution2D> conv(int64_t in, int64_t out, int64_t ksize, int64_t stride) {
  return std::make_shared<Convolution2D>(Convolution2DOptions(in, out, ksize)
                                             .stride(stride)
                                             .pad(ksize / 2)
                                             .nobias()
                                             .initial_w(initializers::HeNormal()));
}

// Batch normalization configured by config, followed by a fused ReLU when `activation` says so.
std::shared_ptr<BatchNormalization> batch_norm(const NormalizationConfig& config, int64_t size, bool zero_gamma = false,
                                               functions::Activation activation = functions::Activation::none) {
  return std::make_shared<BatchNormalization>(config.options(size).zero_gamma(zero_gamma).activation(activation));
}

}  // namespace

ResidualBlock::ResidualBlock(int64_t in_channels, const std::vector<BranchLayer>& branch,
                             const NormalizationConfig& bn)
    : depth_(static_cast<int64_t>(branch.size())) {
  if (branch.empty()) throw ValueError("ResidualBlock: expected at least one branch layer");
  int64_t channels = in_channels, stride = 1;
  for (size_t i = 0; i < branch.size(); ++i) {
    const BranchLayer& layer = branch[i];
    const std::string index = std::to_string(i + 1);
    add_link("conv" + index, conv(channels, layer.out_channels, layer.ksize, layer.stride));
    const bool last = i + 1 == branch.size();  // the last BN also adds the shortcut before its ReLU
    add_link("bn" + index, batch_norm(bn, layer.out_channels, bn.zero_gamma && last, functions::Activation::relu));
    channels = layer.out_channels;
    stride *= layer.stride;
  }
  projection_ = channels != in_channels || stride != 1;
  if (projection_) {
    add_link("shortcut_conv", conv(in_channels, channels, 1, stride));
    add_link("shortcut_bn", batch_norm(bn, channels));
  }
}

std::shared_ptr<ResidualBlock> ResidualBlock::basic(int64_t in_channels, int64_t out_channels, int64_t stride,
                                                    const NormalizationConfig& bn) {
  return std::make_shared<ResidualBlock>(
      in_channels, std::vector<BranchLayer>{{out_channels, 3, stride}, {out_channels, 3, 1}}, bn);
}

std::shared_ptr<ResidualBlock> ResidualBlock::bottleneck(int64_t in_channels, int64_t width, int64_t stride,
                                                         const NormalizationConfig& bn) {
  return std::make_shared<ResidualBlock>(
      in_channels, std::vector<BranchLayer>{{width, 1, 1}, {width, 3, stride}, {4 * width, 1, 1}}, bn);
}

Variable ResidualBlock::forward(const Variable& x) {
  Variable h = x;
  for (int64_t i = 1; i < depth_; ++i) {
    const std::string index = std::to_string(i);
    h = child<BatchNormalization>("bn" + index)->forward(child<Convolution2D>("conv" + index)->forward(h));
  }
  const std::string last = std::to_string(depth_);
  h = child<Convolution2D>("conv" + last)->forward(h);
  const Variable shortcut =
      projection_ ? child<BatchNormalization>("shortcut_bn")->forward(child<Convolution2D>("shortcut_conv")->forward(x))
                  : x;
  return child<BatchNormalization>("bn" + last)->forward(h, shortcut);  // relu(bn(h) + shortcut)
}

}  // namespace kusari::links::models
