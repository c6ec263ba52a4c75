#pragma once
// One call that exempts biases and normalisation parameters from weight decay and LARS scaling
// (Jia et al. 2018: no decay on any bias nor on batch-norm γ and β, which also skip LARS).

#include <functional>
#include <string>

#include <kusari/core/api.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::optimizers {

// Chooses parameters by path ("/bn1/gamma") and variable (undefined while uninitialised).
using ParamPredicate = std::function<bool(const std::string& path, const Variable& param)>;

// True for parameters named "b", "beta" or "gamma" (the last component of the path).
KUSARI_API bool is_bias_or_normalization(const std::string& path, const Variable& param);
// True for initialised parameters with at most one axis (biases, normalisation scales and shifts).
KUSARI_API bool is_one_dimensional(const std::string& path, const Variable& param);

// For every parameter of the optimizer's target that `predicate` selects: overrides its rule's
// weight_decay_rate with 0, and marks the rule weight_decay_exempt and lars_skip. Returns how many
// parameters were selected; throws ValueError before setup().
KUSARI_API int64_t exclude_from_weight_decay(Optimizer& optimizer, const ParamPredicate& predicate = is_bias_or_normalization);

}  // namespace kusari::optimizers
