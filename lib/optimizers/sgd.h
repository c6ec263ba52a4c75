#pragma once
// SGD: w ← w − lr·(g + λw).

#include <kusari/core/api.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::optimizers {

// Plain stochastic gradient descent.
class KUSARI_API SGD : public Optimizer {
 public:
  // lr ≥ 0; weight_decay_rate λ is coupled L2.
  explicit SGD(double lr = 0.01, double weight_decay_rate = 0);

 protected:
  std::unique_ptr<UpdateRule> create_update_rule() override;
};

}  // namespace kusari::optimizers
