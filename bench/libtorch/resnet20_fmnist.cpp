// libtorch twin of resnet20_fmnist: the CIFAR-style ResNet-20 on (128, 1, 28, 28).

#include "residual_network.h"
#include "torch_bench.h"

int main(int argc, char** argv) {
  const auto options = torch_bench::setup(argc, argv, {.warmup = 2, .min_steps = 3, .seconds = 3.0});
  torch_bench::train_benchmark("resnet20_fmnist_b128", torch_bench::cifar_resnet(20, 1, 10),
                               torch::randn({128, 1, 28, 28}), torch_bench::random_labels(128, 10), options);
}
