#include <kusari/optimizers/lamb.h>

#include <cmath>

#include <kusari/kernels/routines.h>
#include <kusari/optimizers/numerics.h>

namespace kusari::optimizers {

namespace {
class LAMBRule : public UpdateRule {
 public:
  explicit LAMBRule(std::shared_ptr<const Hyperparameter> parent) : UpdateRule(std::move(parent), {"m", "v"}) {}

 protected:
  void update_core(const Array& data, const Array& grad) override {
    const double beta1 = hp("beta1"), beta2 = hp("beta2");
    const double lambda = lars_skip() ? 0 : hp("weight_decay_rate");
    const Array& m = state("m", data);
    const Array& v = state("v", data);
    m.assign(m * beta1 + grad * (1 - beta1));
    v.assign(v * beta2 + ops::square(grad) * (1 - beta2));
    const double t = static_cast<double>(this->t());
    const Array r = m / (1 - std::pow(beta1, t)) / (ops::sqrt(v / (1 - std::pow(beta2, t))) + hp("eps"));
    const Array u = lambda == 0 ? r : ops::add(r, data * lambda);
    Array rate = ops::scalar_like(hp("lr"), data);
    if (!lars_skip()) {
      const Array w_norm = l2_norm(data), u_norm = l2_norm(u);
      const Array phi = ops::minimum(ops::maximum(w_norm, ops::scalar_like(hp("lower_bound"), w_norm)),
                                     ops::scalar_like(hp("upper_bound"), w_norm));
      const Array ratio = ops::where(both_positive(w_norm, u_norm), phi / u_norm, ops::scalar_like(1.0, phi));
      rate = (ratio * hp("lr")).astype(data.dtype());
    }
    ops::add_to(data, -ops::mul(u, rate));
  }
};
}  // namespace

LAMB::LAMB(const LAMBOptions& options) : AdaptiveMomentOptimizer(options.lr, options.weight_decay_rate) {
  hyperparam().define("beta1", require_unit_interval(options.beta1, "LAMB", "beta1"));
  hyperparam().define("beta2", require_unit_interval(options.beta2, "LAMB", "beta2"));
  hyperparam().define("eps", require_nonnegative(options.eps, "LAMB", "eps"));
  require_nonnegative(options.lower_bound, "LAMB", "lower_bound");
  if (!(options.lower_bound <= options.upper_bound)) {
    throw ValueError(cat("LAMB: expected lower_bound <= upper_bound, got ", options.lower_bound, " and ",
                         options.upper_bound));
  }
  hyperparam().define("lower_bound", options.lower_bound);
  hyperparam().define("upper_bound", options.upper_bound);
}

std::unique_ptr<UpdateRule> LAMB::create_update_rule() { return std::make_unique<LAMBRule>(shared_hyperparam()); }

}  // namespace kusari::optimizers
