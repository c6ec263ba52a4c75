#include <kusari/optimizers/weight_decay_exclusion.h>

namespace kusari::optimizers {

bool is_bias_or_normalization(const std::string& path, const Variable&) {
  const std::string name = path.substr(path.rfind('/') + 1);
  return name == "b" || name == "beta" || name == "gamma";
}

bool is_one_dimensional(const std::string&, const Variable& param) { return param.defined() && param.ndim() <= 1; }

int64_t exclude_from_weight_decay(Optimizer& optimizer, const ParamPredicate& predicate) {
  if (!optimizer.target()) throw ValueError("exclude_from_weight_decay: call setup(link) on the optimizer first");
  int64_t count = 0;
  for (const auto& [path, param] : optimizer.target()->namedparams(true)) {
    if (!predicate(path, param)) continue;
    UpdateRule& rule = optimizer.update_rule(path);
    rule.hyperparam().set("weight_decay_rate", 0);
    rule.set_weight_decay_exempt(true);
    rule.set_lars_skip(true);
    ++count;
  }
  return count;
}

}  // namespace kusari::optimizers
