#pragma once
// The ResNets of kusari's L::models written with torch::nn modules, layer for layer: convolutions
// without bias followed by batch normalization, projection shortcuts (1x1 convolution and batch
// normalization) where a block changes the channels or the extents, global average pooling, a linear
// classifier.

#include <torch/torch.h>

#include <functional>
#include <vector>

namespace torch_bench {

// One convolution of a residual branch (padded by ksize / 2).
struct BranchLayer {
  int64_t out_channels, ksize, stride;
};

// y = relu(branch(x) + shortcut(x)); the branch is conv, bn, relu, ..., conv, bn.
class ResidualBlockImpl : public torch::nn::Module {
 public:
  // A block on in_channels inputs.
  ResidualBlockImpl(int64_t in_channels, const std::vector<BranchLayer>& branch) {
    int64_t channels = in_channels, stride = 1;
    for (size_t i = 0; i < branch.size(); ++i) {
      const BranchLayer& layer = branch[i];
      const std::string index = std::to_string(i + 1);
      convs_.push_back(register_module("conv" + index, conv(channels, layer.out_channels, layer.ksize, layer.stride)));
      bns_.push_back(register_module("bn" + index, torch::nn::BatchNorm2d(layer.out_channels)));
      channels = layer.out_channels;
      stride *= layer.stride;
    }
    if (channels != in_channels || stride != 1) {
      shortcut_conv_ = register_module("shortcut_conv", conv(in_channels, channels, 1, stride));
      shortcut_bn_ = register_module("shortcut_bn", torch::nn::BatchNorm2d(channels));
    }
  }
  // relu(branch(x) + shortcut(x)).
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = x;
    for (size_t i = 0; i < convs_.size(); ++i) {
      h = bns_[i]->forward(convs_[i]->forward(h));
      if (i + 1 < convs_.size()) h = torch::relu(h);
    }
    const torch::Tensor shortcut = shortcut_conv_ ? shortcut_bn_->forward(shortcut_conv_->forward(x)) : x;
    return torch::relu(h + shortcut);
  }

  // A bias-free convolution padded by ksize / 2.
  static torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t ksize, int64_t stride) {
    return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, ksize).stride(stride).padding(ksize / 2).bias(false));
  }

 private:
  std::vector<torch::nn::Conv2d> convs_;
  std::vector<torch::nn::BatchNorm2d> bns_;
  torch::nn::Conv2d shortcut_conv_{nullptr};
  torch::nn::BatchNorm2d shortcut_bn_{nullptr};
};
TORCH_MODULE(ResidualBlock);

// A stage: `blocks` residual blocks, the first from in_channels with `stride`, each made by `branch`.
inline torch::nn::Sequential residual_stage(int64_t blocks, int64_t in_channels, int64_t out_channels,
                                            const std::function<std::vector<BranchLayer>(int64_t stride)>& branch,
                                            int64_t stride) {
  torch::nn::Sequential stage;
  for (int64_t i = 0; i < blocks; ++i) {
    stage->push_back(ResidualBlock(i == 0 ? in_channels : out_channels, branch(i == 0 ? stride : 1)));
  }
  return stage;
}

// relu(bn(conv(x))), an optional 3x3/2 max pooling, the stages, the spatial mean and a linear layer.
class ResidualNetworkImpl : public torch::nn::Module {
 public:
  // The network from its stem convolution, stages, and classifier input width.
  ResidualNetworkImpl(torch::nn::Conv2dOptions stem, bool stem_max_pool, std::vector<torch::nn::Sequential> stages,
                      int64_t features, int64_t n_classes)
      : stem_max_pool_(stem_max_pool) {
    const int64_t stem_channels = stem.out_channels();
    conv1_ = register_module("conv1", torch::nn::Conv2d(stem.bias(false)));
    bn1_ = register_module("bn1", torch::nn::BatchNorm2d(stem_channels));
    for (size_t i = 0; i < stages.size(); ++i) {
      stages_.push_back(register_module("res" + std::to_string(i + 2), stages[i]));
    }
    fc_ = register_module("fc", torch::nn::Linear(features, n_classes));
  }
  // The logits (N, n_classes).
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = torch::relu(bn1_->forward(conv1_->forward(x)));
    if (stem_max_pool_) h = torch::max_pool2d(h, 3, 2, 1);
    for (auto& stage : stages_) h = stage->forward(h);
    return fc_->forward(h.mean({2, 3}));
  }

 private:
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  std::vector<torch::nn::Sequential> stages_;
  torch::nn::Linear fc_{nullptr};
  bool stem_max_pool_;
};
TORCH_MODULE(ResidualNetwork);

// The CIFAR-style ResNet of depth 6n + 2 (three stages of basic blocks, 16, 32 and 64 channels).
inline ResidualNetwork cifar_resnet(int64_t depth, int64_t in_channels, int64_t n_classes) {
  std::vector<torch::nn::Sequential> stages;
  int64_t channels = 16;
  for (const int64_t width : {16, 32, 64}) {
    const auto basic = [width](int64_t stride) { return std::vector<BranchLayer>{{width, 3, stride}, {width, 3, 1}}; };
    stages.push_back(residual_stage((depth - 2) / 6, channels, width, basic, width == 16 ? 1 : 2));
    channels = width;
  }
  return ResidualNetwork(torch::nn::Conv2dOptions(in_channels, 16, 3).padding(1), false, stages, 64, n_classes);
}

// ResNet-50: a 7x7/2 stem with max pooling and four stages of 3, 4, 6, 3 bottleneck blocks (stride on the 3x3).
inline ResidualNetwork resnet50(int64_t n_classes) {
  std::vector<torch::nn::Sequential> stages;
  int64_t channels = 64;
  const int64_t blocks[] = {3, 4, 6, 3}, widths[] = {64, 128, 256, 512};
  for (int s = 0; s < 4; ++s) {
    const int64_t width = widths[s];
    const auto bottleneck = [width](int64_t stride) {
      return std::vector<BranchLayer>{{width, 1, 1}, {width, 3, stride}, {4 * width, 1, 1}};
    };
    stages.push_back(residual_stage(blocks[s], channels, 4 * width, bottleneck, s == 0 ? 1 : 2));
    channels = 4 * width;
  }
  return ResidualNetwork(torch::nn::Conv2dOptions(3, 64, 7).stride(2).padding(3), true, stages, 2048, n_classes);
}

}  // namespace torch_bench
