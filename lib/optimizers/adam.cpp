#include <kusari/optimizers/adam.h>

#include <cmath>

#include <kusari/kernels/routines.h>

namespace kusari::optimizers {

namespace {
class AdamRule : public UpdateRule {
 public:
  explicit AdamRule(std::shared_ptr<const Hyperparameter> parent)
      : UpdateRule(std::move(parent), {"m", "v", "v_max"}) {}

 protected:
  void update_core(const Array& data, const Array& grad) override {
    const double beta1 = hp("beta1"), beta2 = hp("beta2"), lambda = hp("weight_decay_rate");
    const bool decoupled = hp("decoupled_weight_decay") != 0;
    const Array g = decoupled ? grad : with_weight_decay(data, grad);
    const Array& m = state("m", data);
    const Array& v = state("v", data);
    m.assign(m * beta1 + g * (1 - beta1));
    v.assign(v * beta2 + ops::square(g) * (1 - beta2));
    Array second = v;
    if (hp("amsgrad") != 0) {
      const Array& v_max = state("v_max", data);
      v_max.assign(ops::maximum(v_max, v));
      second = v_max;
    }
    const double t = static_cast<double>(this->t());
    const double correction1 = 1 - std::pow(beta1, t), correction2 = 1 - std::pow(beta2, t);
    Array step = m * (hp("lr") / correction1) / (ops::sqrt(second / correction2) + hp("eps"));
    if (decoupled && lambda != 0) step = step + data * lambda;
    ops::add_to(data, step * -hp("eta"));
  }
};
}  // namespace

Adam::Adam(const AdamOptions& options) : AdaptiveMomentOptimizer(options.lr, options.weight_decay_rate) {
  hyperparam().define("beta1", require_unit_interval(options.beta1, "Adam", "beta1"));
  hyperparam().define("beta2", require_unit_interval(options.beta2, "Adam", "beta2"));
  hyperparam().define("eps", require_nonnegative(options.eps, "Adam", "eps"));
  hyperparam().define("eta", require_nonnegative(options.eta, "Adam", "eta"));
  hyperparam().define("amsgrad", options.amsgrad ? 1 : 0);
  hyperparam().define("decoupled_weight_decay", options.decoupled_weight_decay ? 1 : 0);
}

std::unique_ptr<UpdateRule> Adam::create_update_rule() { return std::make_unique<AdamRule>(shared_hyperparam()); }

}  // namespace kusari::optimizers
