#pragma once
// Loss scaling for half-precision training (Micikevicius et al. 2018): the loss is multiplied by S
// before backward so small gradients survive float16, and the optimizer divides them by S again.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>

namespace kusari::optimizers {

// Settings of dynamic loss scaling.
struct KUSARI_API DynamicLossScaleOptions {
  double initial_scale = 65536.0;     // S at the start (2^16)
  int64_t growth_interval = 2000;     // clean steps in a row after which S grows
  double factor = 2.0;                // S is multiplied by this on growth and divided on overflow
  double max_scale = 16777216.0;      // S never grows past this (2^24)
  double min_scale = 1.0;             // S never shrinks below this
};

// A static or dynamic loss scale. The backward seed is S in the loss's dtype: for a float16 loss the
// default 2^16 is already inf (float16 stops at 65504), so the first step is skipped and S settles
// at 2^15; a float32 loss avoids that.
class KUSARI_API LossScaler {
 public:
  // A fixed scale S > 0; throws ValueError otherwise.
  static LossScaler fixed(double scale);
  // A scale that halves on every overflow and doubles after growth_interval clean steps; throws
  // ValueError on inconsistent options.
  static LossScaler dynamic(const DynamicLossScaleOptions& options = {});

  // The current scale S.
  double scale() const { return scale_; }
  // Whether the scale adapts (and the optimizer checks gradients for inf/NaN).
  bool is_dynamic() const { return dynamic_; }
  // Clean steps since the last overflow or growth.
  int64_t clean_steps() const { return clean_steps_; }
  // The dynamic settings (meaningless for a fixed scale).
  const DynamicLossScaleOptions& options() const { return options_; }
  // Records one step's outcome: an overflow divides S by the factor and restarts the count; a clean
  // step counts, and the growth_interval-th multiplies S by the factor (capped). Fixed scales ignore it.
  void record(bool finite);
  // Saves or loads the scale and the clean-step count.
  void serialize(Serializer& serializer);

 private:
  LossScaler(double scale, bool dynamic, const DynamicLossScaleOptions& options);

  double scale_;
  bool dynamic_;
  DynamicLossScaleOptions options_;
  int64_t clean_steps_ = 0;
};

}  // namespace kusari::optimizers
