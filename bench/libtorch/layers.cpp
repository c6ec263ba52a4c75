// libtorch twin of layers.cpp: per-layer forward and forward-plus-backward times of ResNet-20 at batch
// 128 on 28x28 inputs, names prefixed by "torch_".

#include "residual_network.h"
#include "torch_bench.h"

namespace {

// A layer to time: its parameters (null for none), how to apply it, and its input shape.
struct Layer {
  std::string name;
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> apply;
  std::vector<int64_t> input;
};

// A bias-free 3x3 convolution on `channels` channels, padded by 1, as the residual blocks have.
Layer conv3x3(int64_t channels, int64_t extent) {
  auto conv = torch_bench::ResidualBlockImpl::conv(channels, channels, 3, 1);
  return {"conv3x3_c" + std::to_string(channels) + "_" + std::to_string(extent), conv.ptr(),
          [conv](const torch::Tensor& x) mutable { return conv->forward(x); }, {128, channels, extent, extent}};
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = torch_bench::setup(argc, argv, {.warmup = 2, .min_steps = 5, .seconds = 0.5});
  torch::nn::BatchNorm2d bn(16);
  const std::vector<Layer> layers{
      conv3x3(16, 28), conv3x3(32, 14), conv3x3(64, 7),
      {"bn_c16_28", bn.ptr(), [bn](const torch::Tensor& x) mutable { return bn->forward(x); }, {128, 16, 28, 28}},
      {"relu_c16_28", nullptr, [](const torch::Tensor& x) { return torch::relu(x); }, {128, 16, 28, 28}}};
  for (const Layer& layer : layers) {
    torch::Tensor x = torch::randn(layer.input).requires_grad_(true);
    const int64_t batch = layer.input[0];
    kusari::bench::time_steps("torch_" + layer.name + "_fwd", batch, [&] { layer.apply(x); }, options);
    kusari::bench::time_steps("torch_" + layer.name + "_fwdbwd", batch, [&] {
      if (layer.module) {
        for (torch::Tensor& p : layer.module->parameters()) p.mutable_grad().reset();
      }
      x.mutable_grad().reset();
      const torch::Tensor y = layer.apply(x);
      y.backward(torch::ones_like(y));
    }, options);
  }
}
