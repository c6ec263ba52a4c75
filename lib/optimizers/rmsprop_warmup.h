#pragma once
// The RMSprop warm-up of Akiba, Suzuki, Fukuda 2017: one update that mixes momentum SGD and RMSprop
// and slides from RMSprop to SGD as the epoch e advances:
//   m ← μ2·m + (1 − μ2)·g²;  D ← μ1·D − (α_SGD + α_RMS / (√m + ε))·g;  w ← w + lr·D
//   α_SGD(e) = 0.5·exp(2(e − b_c)/b_p) for e < b_c, min(1, 0.5 + (e − b_c)/b_p) after
//   α_RMS(e) = (1 − α_SGD(e))·lr_RMS / lr
// e is the optimizer's epoch_detail(), which the training loop sets every iteration.

#include <kusari/core/api.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::optimizers {

// Settings of the RMSprop warm-up (defaults from the paper).
struct KUSARI_API RMSpropWarmupOptions {
  double lr = 0.1;                // lr of the SGD phase
  double momentum = 0.9;          // μ1, in [0, 1)
  double rms_decay = 0.99;        // μ2, in [0, 1)
  double eps = 1e-8;              // ε
  double lr_rms = 3e-4;           // lr_RMS, the rate of the RMSprop phase
  double center = 10;             // b_c, the epoch where α_SGD reaches 0.5
  double period = 5;              // b_p > 0, the length of the transition
  double weight_decay_rate = 0;   // λ (coupled L2)
};

// α_SGD(e) for the given b_c and b_p.
KUSARI_API double warmup_alpha_sgd(double epoch, double center, double period);

// Momentum SGD that starts as RMSprop.
class KUSARI_API RMSpropWarmup : public Optimizer {
 public:
  // Throws ValueError for an option out of its range.
  explicit RMSpropWarmup(const RMSpropWarmupOptions& options = {});
  // α_SGD at the current epoch_detail().
  double alpha_sgd() const;
  // α_RMS at the current epoch_detail() (0 when lr is 0).
  double alpha_rms() const;

 protected:
  std::unique_ptr<UpdateRule> create_update_rule() override;
};

}  // namespace kusari::optimizers
