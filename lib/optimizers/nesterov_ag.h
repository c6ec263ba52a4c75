#pragma once
// Nesterov's accelerated gradient in Chainer's form:
// v ← m·v − lr·g;  w ← w + m²·v − (1 + m)·lr·g  (g including coupled L2 λw).

#include <kusari/core/api.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::optimizers {

// Momentum SGD with Nesterov's look-ahead.
class KUSARI_API NesterovAG : public Optimizer {
 public:
  // lr ≥ 0, momentum m in [0, 1), weight_decay_rate λ (coupled L2).
  explicit NesterovAG(double lr = 0.01, double momentum = 0.9, double weight_decay_rate = 0);
  // The momentum m.
  double momentum() const { return hyperparam().get("momentum"); }
  // Sets the momentum.
  void set_momentum(double momentum) { hyperparam().set("momentum", momentum); }

 protected:
  std::unique_ptr<UpdateRule> create_update_rule() override;
};

}  // namespace kusari::optimizers
