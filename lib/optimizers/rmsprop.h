#pragma once
// RMSprop: ms ← α·ms + (1 − α)·g²;  w ← w − lr·g / (√ms + ε)  (g including coupled L2 λw).

#include <kusari/core/api.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::optimizers {

// Gradient descent scaled by a running root mean square of the gradient.
class KUSARI_API RMSprop : public Optimizer {
 public:
  // lr ≥ 0, alpha α in [0, 1), eps ε ≥ 0, weight_decay_rate λ (coupled L2).
  explicit RMSprop(double lr = 0.01, double alpha = 0.99, double eps = 1e-8, double weight_decay_rate = 0);
  // The decay α of the mean square.
  double alpha() const { return hyperparam().get("alpha"); }
  // Sets α.
  void set_alpha(double alpha) { hyperparam().set("alpha", alpha); }
  // The ε added to the root mean square.
  double eps() const { return hyperparam().get("eps"); }
  // Sets ε.
  void set_eps(double eps) { hyperparam().set("eps", eps); }

 protected:
  std::unique_ptr<UpdateRule> create_update_rule() override;
};

}  // namespace kusari::optimizers
