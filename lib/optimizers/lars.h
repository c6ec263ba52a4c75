#pragma once
// LARS (You, Gitman, Ginsburg 2017): layer-wise adaptive rate scaling with momentum.
//   trust = η‖w‖ / (‖g‖ + β‖w‖ + ε) if ‖w‖ > 0 and ‖g‖ > 0, else 1
//   v ← m·v + lr·trust·(g + βw);  w ← w − v
// Parameters marked lars_skip (biases, batch-norm γ/β) use trust = 1 and β = 0. The `clip` variant
// (NVIDIA's LARC) uses the rate min(lr, η‖w‖ / (‖g‖ + β‖w‖ + ε)) instead of lr·trust.

#include <kusari/core/api.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::optimizers {

// Settings of LARS, e.g. `LARS({.lr = 10, .weight_decay_rate = 5e-5})`.
struct KUSARI_API LARSOptions {
  double lr = 0.1;                 // global rate
  double momentum = 0.9;           // m, in [0, 1)
  double eta = 0.001;              // trust coefficient η
  double weight_decay_rate = 0;    // β
  double eps = 1e-9;               // ε in the trust ratio's denominator
  bool clip = false;               // LARC: rate min(lr, η‖w‖ / (‖g‖ + β‖w‖ + ε))
};

// The per-layer rate as a 0-d array (float32, or float64 for float64 arrays): lr·trust, or with
// `clip` min(lr, η‖w‖ / (‖g‖ + β‖w‖ + ε)); lr when ‖w‖ or ‖g‖ is 0.
KUSARI_API Array lars_rate(const Array& w, const Array& g, double lr, double eta, double beta, double eps, bool clip);

// Layer-wise adaptive rate scaling.
class KUSARI_API LARS : public Optimizer {
 public:
  // Throws ValueError for an option out of its range.
  explicit LARS(const LARSOptions& options = {});
  // The momentum m.
  double momentum() const { return hyperparam().get("momentum"); }
  // Sets the momentum.
  void set_momentum(double momentum) { hyperparam().set("momentum", momentum); }
  // The trust coefficient η.
  double eta() const { return hyperparam().get("eta"); }
  // Sets η.
  void set_eta(double eta) { hyperparam().set("eta", eta); }

 protected:
  std::unique_ptr<UpdateRule> create_update_rule() override;
};

}  // namespace kusari::optimizers
