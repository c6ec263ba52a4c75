// Per-layer times of ResNet-20 at batch 128 on 28x28 inputs (the resnet20_fmnist workload): each
// layer's forward alone ("_fwd") and forward plus backward to its input and parameters ("_fwdbwd"),
// in the bench line format (samples/s counts images), on channels-last inputs as the layers get them in
// the network. bench/libtorch/layers.cpp is the twin.

#include "train_bench.h"

using namespace kusari;

namespace {

// A layer to time: its parameters (null for none), how to apply it, and its input shape.
struct Layer {
  std::string name;
  std::shared_ptr<L::Link> link;
  std::function<Variable(const Variable&)> apply;
  Shape input;
};

// A bias-free 3x3 convolution on `channels` channels, padded by 1, as the residual blocks have.
Layer conv3x3(int64_t channels, int64_t extent) {
  auto link = std::make_shared<L::Convolution2D>(L::Convolution2DOptions(channels, channels, 3).pad(1).nobias());
  return {cat("conv3x3_c", channels, "_", extent), link, [link](const Variable& x) { return link->forward(x); },
          Shape{128, channels, extent, extent}};
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options options = bench::setup(argc, argv, {.warmup = 2, .min_steps = 5, .seconds = 0.5});
  auto bn = std::make_shared<L::BatchNormalization>(16);
  const std::vector<Layer> layers{
      conv3x3(16, 28), conv3x3(32, 14), conv3x3(64, 7),
      {"bn_c16_28", bn, [bn](const Variable& x) { return bn->forward(x); }, Shape{128, 16, 28, 28}},
      {"relu_c16_28", nullptr, [](const Variable& x) { return F::relu(x); }, Shape{128, 16, 28, 28}}};
  for (const Layer& layer : layers) {
    Variable x(in_order(Array::normal(layer.input, 0, 1, 1), MemoryOrder::channels_last));
    const int64_t batch = layer.input[0];
    bench::time_steps(layer.name + "_fwd", batch, [&] { layer.apply(x); }, options);
    bench::time_steps(layer.name + "_fwdbwd", batch, [&] {
      if (layer.link) layer.link->cleargrads();
      x.cleargrad();
      Variable y = layer.apply(x);
      const Array ones = empty_in_order(y.data().shape(), memory_order_of(y.data()));
      ones.fill(1);
      y.set_grad(ones);
      y.backward();
    }, options);
  }
}
