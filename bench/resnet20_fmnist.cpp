// The CIFAR-style ResNet-20 on Fashion-MNIST-shaped inputs (128, 1, 28, 28): one MomentumSGD training
// step per iteration.

#include "train_bench.h"

using namespace kusari;

int main(int argc, char** argv) {
  const bench::Options options = bench::setup(argc, argv, {.warmup = 2, .min_steps = 3, .seconds = 3.0});
  const int64_t batch = 128;
  auto model = std::make_shared<L::models::ResNet>(20, 1, 10);
  bench::train_benchmark("resnet20_fmnist_b128", model, Array::normal({batch, 1, 28, 28}, 0, 1, 1),
                         bench::random_labels(batch, 10, 2), options);
}
