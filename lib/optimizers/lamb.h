#pragma once
// LAMB (You et al. 2019): Adam's direction with a layer-wise trust ratio, weight decay decoupled.
//   m ← β1·m + (1 − β1)·g;  v ← β2·v + (1 − β2)·g²;  m̂ = m / (1 − β1^t);  v̂ = v / (1 − β2^t)
//   r = m̂ / (√v̂ + ε);  u = r + λw;  w ← w − lr·φ(‖w‖) / ‖u‖ · u,  φ(z) = min(max(z, γ_l), γ_u)
// The ratio is 1 when ‖w‖ or ‖u‖ is 0, and for parameters marked lars_skip (which also get λ = 0).

#include <kusari/core/api.h>
#include <kusari/optimizers/adaptive_moments.h>

namespace kusari::optimizers {

// Settings of LAMB.
struct KUSARI_API LAMBOptions {
  double lr = 1e-3;               // global rate
  double beta1 = 0.9;             // decay of the first moment, in [0, 1)
  double beta2 = 0.999;           // decay of the second moment, in [0, 1)
  double eps = 1e-6;              // added to √v̂
  double weight_decay_rate = 0;   // λ (decoupled by design)
  double lower_bound = 0;         // γ_l of φ
  double upper_bound = 10;        // γ_u of φ
};

// Layer-wise adaptive moments for large batches.
class KUSARI_API LAMB : public AdaptiveMomentOptimizer {
 public:
  // Throws ValueError for an option out of its range (including lower_bound > upper_bound).
  explicit LAMB(const LAMBOptions& options = {});

 protected:
  std::unique_ptr<UpdateRule> create_update_rule() override;
};

}  // namespace kusari::optimizers
