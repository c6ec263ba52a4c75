#pragma once
// Adam (Kingma & Ba) with bias correction, optional AMSGrad, and weight decay either coupled
// (g += λw) or decoupled as in AdamW (Loshchilov & Hutter):
//   m ← β1·m + (1 − β1)·g;  v ← β2·v + (1 − β2)·g²;  v_max ← max(v_max, v) with AMSGrad
//   w ← w − η·(lr·m̂ / (√v̂ + ε) + λ·w [decoupled only]),  m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t)

#include <kusari/core/api.h>
#include <kusari/optimizers/adaptive_moments.h>

namespace kusari::optimizers {

// Settings of Adam, e.g. `Adam({.lr = 1e-3, .weight_decay_rate = 0.01, .decoupled_weight_decay = true})`.
struct KUSARI_API AdamOptions {
  double lr = 1e-3;                     // step size α
  double beta1 = 0.9;                   // decay of the first moment, in [0, 1)
  double beta2 = 0.999;                 // decay of the second moment, in [0, 1)
  double eps = 1e-8;                    // added to √v̂
  double eta = 1.0;                     // schedule multiplier of the whole step (AdamW's η)
  double weight_decay_rate = 0;         // λ
  bool amsgrad = false;                 // use the running maximum of v
  bool decoupled_weight_decay = false;  // AdamW: decay w directly instead of adding λw to g
};

// Adaptive moment estimation.
class KUSARI_API Adam : public AdaptiveMomentOptimizer {
 public:
  // Throws ValueError for an option out of its range.
  explicit Adam(const AdamOptions& options = {});
  // η, the schedule multiplier.
  double eta() const { return hyperparam().get("eta"); }
  // Sets η.
  void set_eta(double eta) { hyperparam().set("eta", eta); }

 protected:
  std::unique_ptr<UpdateRule> create_update_rule() override;
};

}  // namespace kusari::optimizers
