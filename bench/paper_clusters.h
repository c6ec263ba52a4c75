#pragma once
// The inputs of bench/predict_seeds: the papers' models as per-layer gradients and compute, each GPU's
// training throughput from a public benchmark, and each cluster's links from its published description,
// every number with its source (or marked as an assumption where none states it).

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/distributed/cost_model.h>

namespace bench {

// One layer's parameters (elements) and forward multiply-adds per image, in forward order.
struct LayerShape {
  int64_t parameters = 0;
  double macs = 0;
};

// He et al.'s ResNet-50 at 224x224, in the order of resnet50_gradient_sizes(): each convolution (multiply-adds
// = weights x output positions), its batch normalization's gamma and beta (no multiply-adds counted),
// the fully connected layer's W and b. Stride 2 in each later stage's first 3x3 convolution.
inline std::vector<LayerShape> resnet50_layers() {
  std::vector<LayerShape> layers;
  const auto conv_bn = [&layers](int64_t weights, int64_t channels, int64_t positions) {
    layers.push_back({weights, double(weights) * double(positions)});
    layers.push_back({channels, 0});
    layers.push_back({channels, 0});
  };
  conv_bn(7 * 7 * 3 * 64, 64, 112 * 112);
  int64_t in = 64, side = 56;
  bool first_stage = true;
  for (const auto& [width, blocks] : {std::pair<int64_t, int>{64, 3}, {128, 4}, {256, 6}, {512, 3}}) {
    for (int block = 0; block < blocks; ++block) {
      const int64_t in_side = block == 0 && !first_stage ? side * 2 : side;
      conv_bn(in * width, width, in_side * in_side);
      conv_bn(9 * width * width, width, side * side);
      conv_bn(width * 4 * width, 4 * width, side * side);
      if (block == 0) conv_bn(in * 4 * width, 4 * width, side * side);
      in = 4 * width;
    }
    first_stage = false;
    side /= 2;
  }
  layers.push_back({2048 * 1000, 2048.0 * 1000});
  layers.push_back({1000, 0});
  return layers;
}

// Krizhevsky's AlexNet as the frameworks ship it (64-192-384-256-256 channels, 4096-wide classifier), each
// layer's weights and bias.
inline std::vector<LayerShape> alexnet_layers() {
  std::vector<LayerShape> layers;
  const auto layer = [&layers](int64_t weights, int64_t bias, int64_t positions) {
    layers.push_back({weights, double(weights) * double(positions)});
    layers.push_back({bias, 0});
  };
  layer(11 * 11 * 3 * 64, 64, 55 * 55);
  layer(5 * 5 * 64 * 192, 192, 27 * 27);
  layer(3 * 3 * 192 * 384, 384, 13 * 13);
  layer(3 * 3 * 384 * 256, 256, 13 * 13);
  layer(3 * 3 * 256 * 256, 256, 13 * 13);
  layer(256 * 6 * 6 * 4096, 4096, 1);
  layer(4096 * 4096, 4096, 1);
  layer(4096 * 1000, 1000, 1);
  return layers;
}

// The layers in backward order with the backward time (twice the forward's, split by multiply-adds) of a
// step whose forward and backward take `step_seconds` in all.
inline std::vector<kusari::distributed::cost::LayerCost> backward_costs(const std::vector<LayerShape>& layers,
                                                                         double step_seconds) {
  double macs = 0;
  for (const LayerShape& l : layers) macs += l.macs;
  std::vector<kusari::distributed::cost::LayerCost> costs;
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    costs.push_back({it->parameters, step_seconds * 2.0 / 3.0 * it->macs / macs});
  }
  return costs;
}

// A number the prediction uses, and where it comes from.
struct Input {
  std::string name;
  double value = 0;
  std::string source;
};

// One paper's setting as predict_seeds models it.
struct PaperSetting {
  std::string paper, model;
  int gpus = 0, gpus_per_node = 0, per_gpu_batch = 0, epochs = 0;
  double images_per_second = 0;  // one GPU's training throughput at per_gpu_batch
  kusari::distributed::cost::Cluster cluster;
  std::string algorithm;
  kusari::Dtype wire = kusari::Dtype::float32;
  int64_t bucket_bytes = 0;  // 0: every gradient in one bucket
  bool overlap = false;      // all-reduce during backward
  std::vector<Input> inputs;  // every number above with its source
  double reported_total_seconds = 0;
  double reported_efficiency = 0;  // 0: not reported
  std::string efficiency_against;  // "1_node": against one node of the cluster; empty: against 1 GPU
};

}  // namespace bench
