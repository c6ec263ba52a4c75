// libtorch twin of mlp_mnist: 784-1000-1000-10 ReLU at batch 100.

#include "torch_bench.h"

int main(int argc, char** argv) {
  const auto options = torch_bench::setup(argc, argv, {.warmup = 5, .min_steps = 10, .seconds = 2.0});
  torch_bench::train_benchmark("mlp_mnist_b100", torch_bench::mlp({784, 1000, 1000, 10}), torch::randn({100, 784}),
                               torch_bench::random_labels(100, 10), options);
}
