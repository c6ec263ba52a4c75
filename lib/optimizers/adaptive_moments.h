#pragma once
// The hyperparameter accessors shared by the optimizers that keep first and second moment estimates.

#include <kusari/core/api.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::optimizers {

// Base of Adam and LAMB: typed access to their β1, β2 and ε hyperparameters.
class KUSARI_API AdaptiveMomentOptimizer : public Optimizer {
 public:
  // β1.
  double beta1() const { return hyperparam().get("beta1"); }
  // Sets β1.
  void set_beta1(double beta1) { hyperparam().set("beta1", beta1); }
  // β2.
  double beta2() const { return hyperparam().get("beta2"); }
  // Sets β2.
  void set_beta2(double beta2) { hyperparam().set("beta2", beta2); }
  // ε.
  double eps() const { return hyperparam().get("eps"); }
  // Sets ε.
  void set_eps(double eps) { hyperparam().set("eps", eps); }

 protected:
  using Optimizer::Optimizer;
};

}  // namespace kusari::optimizers
