// libtorch twin of resnet50: ResNet-50 on (16, 3, 224, 224) with 1000 classes, and the peak resident memory.

#include "residual_network.h"
#include "torch_bench.h"

int main(int argc, char** argv) {
  const auto options = torch_bench::setup(argc, argv, {.warmup = 1, .min_steps = 2, .seconds = 0.0});
  torch_bench::train_benchmark("resnet50_b16", torch_bench::resnet50(1000), torch::randn({16, 3, 224, 224}),
                               torch_bench::random_labels(16, 1000), options, kusari::bench::peak_rss_suffix);
}
