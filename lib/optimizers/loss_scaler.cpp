#include <kusari/optimizers/loss_scaler.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <kusari/core/error.h>

namespace kusari::optimizers {

namespace {
void require_positive(double value, const char* what) {
  if (!(value > 0) || !std::isfinite(value)) {
    throw ValueError(cat("LossScaler: expected a finite positive ", what, ", got ", value));
  }
}
}  // namespace

LossScaler::LossScaler(double scale, bool dynamic, const DynamicLossScaleOptions& options)
    : scale_(scale), dynamic_(dynamic), options_(options) {}

LossScaler LossScaler::fixed(double scale) {
  require_positive(scale, "scale");
  return LossScaler(scale, false, {});
}

LossScaler LossScaler::dynamic(const DynamicLossScaleOptions& options) {
  require_positive(options.initial_scale, "initial_scale");
  require_positive(options.min_scale, "min_scale");
  require_positive(options.max_scale, "max_scale");
  if (options.growth_interval < 1) {
    throw ValueError(cat("LossScaler: expected growth_interval >= 1, got ", options.growth_interval));
  }
  if (!(options.factor > 1)) throw ValueError(cat("LossScaler: expected factor > 1, got ", options.factor));
  if (!(options.min_scale <= options.initial_scale && options.initial_scale <= options.max_scale)) {
    throw ValueError(cat("LossScaler: expected min_scale <= initial_scale <= max_scale, got ", options.min_scale,
                         ", ", options.initial_scale, ", ", options.max_scale));
  }
  return LossScaler(options.initial_scale, true, options);
}

void LossScaler::record(bool finite) {
  if (!dynamic_) return;
  if (!finite) {
    scale_ = std::max(scale_ / options_.factor, options_.min_scale);
    clean_steps_ = 0;
    return;
  }
  if (++clean_steps_ >= options_.growth_interval) {
    scale_ = std::min(scale_ * options_.factor, options_.max_scale);
    clean_steps_ = 0;
  }
}

void LossScaler::serialize(Serializer& serializer) {
  serialize_at_least(serializer, "loss_scale", scale_, std::numeric_limits<double>::denorm_min(), "LossScaler");
  serialize_count(serializer, "loss_scale_clean_steps", clean_steps_, "LossScaler");
}

}  // namespace kusari::optimizers
