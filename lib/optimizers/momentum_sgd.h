#pragma once
// MomentumSGD in Chainer's form: v ← m·v − lr·(g + λw); w ← w + v.

#include <kusari/core/api.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::optimizers {

// Stochastic gradient descent with momentum.
class KUSARI_API MomentumSGD : public Optimizer {
 public:
  // lr ≥ 0, momentum m in [0, 1), weight_decay_rate λ (coupled L2).
  explicit MomentumSGD(double lr = 0.01, double momentum = 0.9, double weight_decay_rate = 0);
  // The momentum m.
  double momentum() const { return hyperparam().get("momentum"); }
  // Sets the momentum.
  void set_momentum(double momentum) { hyperparam().set("momentum", momentum); }
  // Whether momentum correction is on.
  bool momentum_correction() const { return hyperparam().get("momentum_correction") != 0; }
  // With momentum correction on (Goyal et al.), a change of lr rescales v by lr_new / lr_old first.
  void set_momentum_correction(bool enabled) { hyperparam().set("momentum_correction", enabled ? 1 : 0); }

 protected:
  std::unique_ptr<UpdateRule> create_update_rule() override;
};

}  // namespace kusari::optimizers
