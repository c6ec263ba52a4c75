#pragma once
// MLP: the multi-layer perceptron of Chainer's MNIST example.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/links/chain.h>

namespace kusari::links::models {

// n_layers Linear layers l1 ... ln with ReLU between them: l1 infers its input size, the hidden layers
// have n_units outputs and the last n_out.
class KUSARI_API MLP : public Cloneable<MLP, Chain> {
 public:
  // n_layers >= 1 layers; the default three are Chainer's example.
  MLP(int64_t n_units, int64_t n_out, int64_t n_layers = 3);
  // The logits (N, n_out) of x (N, ...).
  Variable forward(const Variable& x) override;

 protected:
  std::string type_name() const override { return "MLP"; }

 private:
  int64_t n_layers_;
};

}  // namespace kusari::links::models
