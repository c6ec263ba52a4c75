// Chainer's MNIST MLP (784-1000-1000-10, ReLU) at batch 100: one MomentumSGD training step per iteration.

#include "train_bench.h"

using namespace kusari;

int main(int argc, char** argv) {
  const bench::Options options = bench::setup(argc, argv, {.warmup = 5, .min_steps = 10, .seconds = 2.0});
  const int64_t batch = 100;
  auto model = std::make_shared<L::models::MLP>(1000, 10);
  bench::train_benchmark("mlp_mnist_b100", model, Array::normal({batch, 784}, 0, 1, 1),
                         bench::random_labels(batch, 10, 2), options);
}
