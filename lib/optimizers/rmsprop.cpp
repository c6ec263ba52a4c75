#include <kusari/optimizers/rmsprop.h>

#include <kusari/kernels/routines.h>

namespace kusari::optimizers {

namespace {
class RMSpropRule : public UpdateRule {
 public:
  explicit RMSpropRule(std::shared_ptr<const Hyperparameter> parent) : UpdateRule(std::move(parent), {"ms"}) {}

 protected:
  void update_core(const Array& data, const Array& grad) override {
    const double alpha = hp("alpha");
    const Array g = with_weight_decay(data, grad);
    const Array& ms = state("ms", data);
    ms.assign(ms * alpha + ops::square(g) * (1 - alpha));
    ops::add_to(data, g * -hp("lr") / (ops::sqrt(ms) + hp("eps")));
  }
};
}  // namespace

RMSprop::RMSprop(double lr, double alpha, double eps, double weight_decay_rate) : Optimizer(lr, weight_decay_rate) {
  hyperparam().define("alpha", require_unit_interval(alpha, "RMSprop", "alpha"));
  hyperparam().define("eps", require_nonnegative(eps, "RMSprop", "eps"));
}

std::unique_ptr<UpdateRule> RMSprop::create_update_rule() { return std::make_unique<RMSpropRule>(shared_hyperparam()); }

}  // namespace kusari::optimizers
