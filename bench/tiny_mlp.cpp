// Framework overhead: a 16-16-16-4 ReLU network from F::linear at batch 1, one full training step
// (forward, softmax cross-entropy, backward, MomentumSGD update) per iteration.

#include "train_bench.h"

using namespace kusari;

namespace {

// The three layers' parameters W0, b0, ... as a link (so kusari::optimizers can update them), applied
// with F::linear directly.
class TinyMLP : public L::Link {
 public:
  TinyMLP() {
    const std::vector<int64_t> widths{16, 16, 16, 4};
    for (size_t i = 0; i + 1 < widths.size(); ++i) {
      const std::string index = std::to_string(i);
      weights_.push_back(add_param("W" + index, Array::normal({widths[i + 1], widths[i]}, 0, 0.25, 10 + i)));
      biases_.push_back(add_param("b" + index, Array::zeros({widths[i + 1]})));
    }
  }
  Variable forward(const Variable& x) override {
    Variable h = x;
    for (size_t i = 0; i < weights_.size(); ++i) {
      h = F::linear(h, weights_[i], biases_[i]);
      if (i + 1 < weights_.size()) h = F::relu(h);
    }
    return h;
  }

 private:
  std::vector<Variable> weights_, biases_;
};

}  // namespace

int main(int argc, char** argv) {
  const bench::Options options = bench::setup(argc, argv, {.warmup = 200, .min_steps = 2000, .seconds = 2.0});
  bench::train_benchmark("tiny_mlp_b1_overhead", std::make_shared<TinyMLP>(), Array::normal({1, 16}, 0, 1, 1),
                         Array::from_vector<int32_t>({2}, {1}), options);
}
