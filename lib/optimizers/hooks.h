#pragma once
// Optimizer hooks: callables an Optimizer runs over every parameter's gradient before (or after)
// the update rules, e.g. `optimizer.add_hook(GradientClipping(5.0), "clip")`.

#include <vector>

#include <kusari/core/api.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::optimizers {

// g ← g + rate·w (L2 weight decay), skipping parameters whose rule is weight_decay_exempt.
class KUSARI_API WeightDecay {
 public:
  // rate ≥ 0; throws ValueError otherwise.
  explicit WeightDecay(double rate);
  // Applies the decay to every entry.
  void operator()(Optimizer& optimizer, std::vector<GradientEntry>& entries) const;

 private:
  double rate_;
};

// g ← g + rate·sign(w) (L1 regularisation), skipping parameters whose rule is weight_decay_exempt.
class KUSARI_API Lasso {
 public:
  // rate ≥ 0; throws ValueError otherwise.
  explicit Lasso(double rate);
  // Applies the penalty to every entry.
  void operator()(Optimizer& optimizer, std::vector<GradientEntry>& entries) const;

 private:
  double rate_;
};

// Rescales all gradients together so their global L2 norm is at most `threshold`.
class KUSARI_API GradientClipping {
 public:
  // threshold > 0; throws ValueError otherwise.
  explicit GradientClipping(double threshold);
  // Multiplies every gradient by min(1, threshold / ‖(g_1, ..., g_n)‖).
  void operator()(Optimizer& optimizer, std::vector<GradientEntry>& entries) const;

 private:
  double threshold_;
};

// Clamps every gradient element into [lower, upper].
class KUSARI_API GradientHardClipping {
 public:
  // lower ≤ upper; throws ValueError otherwise.
  GradientHardClipping(double lower, double upper);
  // Clamps every entry in place.
  void operator()(Optimizer& optimizer, std::vector<GradientEntry>& entries) const;

 private:
  double lower_, upper_;
};

// Turns any momentum optimizer into LARS: g ← trust·(g + βw) with the LARS trust ratio
// η‖w‖ / (‖g‖ + β‖w‖ + ε) (1 when a norm is 0); parameters marked lars_skip are left alone.
class KUSARI_API GradientLARS {
 public:
  // eta η ≥ 0, weight_decay β ≥ 0, eps ε ≥ 0; throws ValueError otherwise.
  explicit GradientLARS(double eta = 0.001, double weight_decay = 0, double eps = 1e-9);
  // Rescales every entry not marked lars_skip.
  void operator()(Optimizer& optimizer, std::vector<GradientEntry>& entries) const;

 private:
  double eta_, weight_decay_, eps_;
};

}  // namespace kusari::optimizers
