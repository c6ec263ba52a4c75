#include <kusari/links/batch_normalization.h>

#include <algorithm>

#include <kusari/functions/activation.h>
#include <kusari/functions/arithmetic.h>
#include <kusari/functions/ghost_batch_normalization.h>
#include <kusari/functions/normalization.h>
#include <kusari/kernels/layer_routines.h>
#include <kusari/kernels/routines.h>
#include <kusari/links/initializers.h>
#include <kusari/links/training_mode.h>

namespace kusari::links {

BatchNormalizationOptions& BatchNormalizationOptions::zero_gamma(bool value) {
  initial_gamma_ = value ? initializers::Zero() : initializers::One();
  return *this;
}

BatchNormalization::BatchNormalization(const BatchNormalizationOptions& options)
    : size_(options.size_),
      decay_(options.decay_),
      eps_(options.eps_),
      finetune_(options.finetune_),
      use_running_average_(options.use_running_average_),
      activation_(options.activation_),
      group_size_(options.group_size_) {
  if (size_ < 1) throw ValueError(cat("BatchNormalization: expected a size >= 1, got ", size_));
  if (!(decay_ >= 0 && decay_ <= 1)) throw ValueError(cat("BatchNormalization: expected a decay in [0, 1], got ", decay_));
  if (!(eps_ > 0)) throw ValueError(cat("BatchNormalization: expected eps > 0, got ", eps_));
  if (group_size_ < 0) throw ValueError(cat("BatchNormalization: expected a group size >= 0, got ", group_size_));
  if (options.use_gamma_) {
    add_param("gamma", {size_}, options.initial_gamma_ ? options.initial_gamma_ : initializers::One());
  }
  if (options.use_beta_) {
    add_param("beta", {size_}, options.initial_beta_ ? options.initial_beta_ : initializers::Zero());
  }
  add_persistent("avg_mean", Array::zeros({size_}));
  add_persistent("avg_var", Array::ones({size_}));
  add_persistent("N", Array::zeros({}, Dtype::int64));
  if (!use_running_average_) {
    add_persistent("last_mean", Array::zeros({size_}));
    add_persistent("last_var", Array::ones({size_}));
    add_persistent("last_count", Array::zeros({}, Dtype::int64));
  }
}

Variable BatchNormalization::param_or_constant(const std::string& name, double value, const Variable& x) const {
  if (is_initialized(name)) return param(name);
  return Variable(Array::full({size_}, value, Dtype::float32, x.device()), false);
}

Variable BatchNormalization::forward(const Variable& x) { return forward(x, Variable()); }

Variable BatchNormalization::forward(const Variable& x, const Variable& residual) {
  const Variable gamma = param_or_constant("gamma", 1.0, x), beta = param_or_constant("beta", 0.0, x);
  if (in_training(*this)) {
    const functions::BatchNormalizationResult result = group_size_ > 0 ? normalize_groups(x, gamma, beta, residual)
                                                                       : normalize_batch(x, gamma, beta, residual);
    if (group_size_ == 0) update_running_averages(result.mean, result.var, result.count);
    if (!use_running_average_) {
      persistent("last_mean").assign(result.mean);
      persistent("last_var").assign(result.var);
      persistent("last_count").fill(static_cast<double>(result.count));
    }
    return result.y;
  }
  const std::string prefix = use_running_average_ ? "avg_" : "last_";
  Variable y = functions::fixed_batch_normalization(x, gamma, beta, Variable(persistent(prefix + "mean"), false),
                                                    Variable(persistent(prefix + "var"), false), eps_);
  if (residual.defined()) {
    if (activation_ == functions::Activation::relu) return functions::add_relu(y, residual);
    y = y + residual;
  }
  return activation_ == functions::Activation::relu ? functions::relu(y) : y;
}

functions::BatchNormalizationResult BatchNormalization::normalize_batch(const Variable& x, const Variable& gamma,
                                                                        const Variable& beta,
                                                                        const Variable& residual) {
  return functions::batch_normalization(x, gamma, beta, eps_, activation_, residual);
}

functions::BatchNormalizationResult BatchNormalization::normalize_groups(const Variable& x, const Variable& gamma,
                                                                         const Variable& beta,
                                                                         const Variable& residual) {
  const functions::GhostBatchNormalizationResult result =
      functions::ghost_batch_normalization(x, gamma, beta, group_size_, eps_, activation_, residual);
  update_running_averages(ops::mean(result.group_mean, {0}), ops::mean(result.group_var, {0}), result.group_count);
  return result;
}

void BatchNormalization::update_running_averages(const Array& mean, const Array& var, int64_t m) {
  double decay = decay_;
  if (finetune_) {
    Array& n = persistent("N");
    n.assign(n + 1.0);
    decay = 1.0 - 1.0 / n.item<double>();
  }
  const double unbias = static_cast<double>(m) / static_cast<double>(std::max<int64_t>(m - 1, 1));
  // average = decay·average + share·batch for both, one kernel on a device.
  ops::batch_norm_running_averages(mean, var, decay, 1.0 - decay, (1.0 - decay) * unbias, persistent("avg_mean"),
                                   persistent("avg_var"));
}

void BatchNormalization::set_finetune(bool finetune) {
  if (finetune && !finetune_) persistent("N").fill(0.0);
  finetune_ = finetune;
}

}  // namespace kusari::links
