#pragma once
// The libtorch side of the training benchmarks: one step is forward, cross-entropy, backward and an SGD
// step (lr 0.01, momentum 0.9) on fixed random inputs, timed and printed as kusari's twins are, with
// the name prefixed by "torch_".

#include <torch/torch.h>

#include <string>

#include "../bench_util.h"

namespace torch_bench {

using kusari::bench::Options;

// Parses the command line over `defaults`, sets libtorch's intra-op thread count from it and flushes
// subnormal floats to zero (as the kusari programs do).
inline Options setup(int argc, char** argv, const Options& defaults) {
  const Options options = kusari::bench::parse_options(argc, argv, defaults);
  if (options.dtype != "float32") {
    std::fprintf(stderr, "%s: the libtorch programs run float32 only, got --dtype %s\n", argv[0], options.dtype.c_str());
    std::exit(2);
  }
  torch::set_num_threads(options.threads);
  at::globalContext().setFlushDenormal(true);
  torch::manual_seed(1);
  return options;
}

// n int64 labels drawn uniformly from [0, classes).
inline torch::Tensor random_labels(int64_t n, int64_t classes) { return torch::randint(classes, {n}, torch::kLong); }

// Times training steps of `model` on inputs x (batch first) with `labels` and prints the bench line.
// Gradients are reset to none before each step, as kusari's Optimizer::update does with cleargrads.
template <class ModuleHolder>
double train_benchmark(const std::string& name, ModuleHolder model, const torch::Tensor& x,
                       const torch::Tensor& labels, const Options& options,
                       const kusari::bench::Suffix& suffix = {}) {
  model->train();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  const auto step = [&] {
    for (torch::Tensor& p : model->parameters()) p.mutable_grad().reset();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), labels);
    loss.backward();
    optimizer.step();
  };
  return kusari::bench::time_steps("torch_" + name, x.size(0), step, options, suffix);
}

// Linear layers of the given widths with ReLU between them.
inline torch::nn::Sequential mlp(const std::vector<int64_t>& widths) {
  torch::nn::Sequential layers;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    layers->push_back(torch::nn::Linear(widths[i], widths[i + 1]));
    if (i + 2 < widths.size()) layers->push_back(torch::nn::ReLU());
  }
  return layers;
}

}  // namespace torch_bench
