// Framework overhead: a 16-16-16-4 ReLU network from F::linear at batch 1, one full training step
// (forward, softmax cross-entropy, backward, SGD update written by hand) per iteration.

#include <kusari/kusari.h>

#include "bench_util.h"

using namespace kusari;

int main(int argc, char** argv) {
  int threads = 1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--threads") threads = std::stoi(argv[i + 1]);
  }
  set_num_threads(threads);
  const std::vector<int64_t> widths{16, 16, 16, 4};
  std::vector<Variable> weights, biases;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    weights.emplace_back(Array::normal({widths[i + 1], widths[i]}, 0, 0.25, 10 + i));
    biases.emplace_back(Array::zeros({widths[i + 1]}));
  }
  const Variable x(Array::normal({1, 16}, 0, 1, 1), false);
  const Variable t(Array::from_vector<int32_t>({2}, {1}), false);
  const double lr = 0.01;
  auto step = [&] {
    Variable h = x;
    for (size_t i = 0; i < weights.size(); ++i) {
      h = F::linear(h, weights[i], biases[i]);
      if (i + 1 < weights.size()) h = F::relu(h);
    }
    Variable loss = F::softmax_cross_entropy(h, t);
    for (auto* group : {&weights, &biases}) {
      for (Variable& p : *group) p.cleargrad();
    }
    loss.backward();
    auto guard = no_backprop_mode();
    for (auto* group : {&weights, &biases}) {
      for (Variable& p : *group) p.data().assign(ops::sub(p.data(), ops::mul(p.grad(), ops::scalar_like(lr, p.grad()))));
    }
  };
  bench::time_steps("tiny_mlp_b1_overhead", 1, step, 200, 2000, 2.0);
}
