// libtorch twin of tiny_mlp: a 16-16-16-4 ReLU network at batch 1 (framework overhead).

#include "torch_bench.h"

int main(int argc, char** argv) {
  const auto options = torch_bench::setup(argc, argv, {.warmup = 200, .min_steps = 2000, .seconds = 2.0});
  torch_bench::train_benchmark("tiny_mlp_b1_overhead", torch_bench::mlp({16, 16, 16, 4}), torch::randn({1, 16}),
                               torch::tensor({1}, torch::kLong), options);
}
