#include <kusari/optimizers/lars.h>

#include <kusari/kernels/routines.h>
#include <kusari/optimizers/numerics.h>

namespace kusari::optimizers {

Array lars_rate(const Array& w, const Array& g, double lr, double eta, double beta, double eps, bool clip) {
  const Array w_norm = l2_norm(w), g_norm = l2_norm(g).astype(w_norm.dtype());
  const Array ratio = w_norm * eta / (g_norm + w_norm * beta + eps);
  const Array lr_array = ops::scalar_like(lr, ratio);
  const Array rate = clip ? ops::minimum(ratio, lr_array) : ratio * lr;
  return ops::where(both_positive(w_norm, g_norm), rate, lr_array);
}

namespace {
class LARSRule : public UpdateRule {
 public:
  explicit LARSRule(std::shared_ptr<const Hyperparameter> parent) : UpdateRule(std::move(parent), {"v"}) {}

 protected:
  void update_core(const Array& data, const Array& grad) override {
    const double lr = hp("lr");
    const double beta = lars_skip() ? 0 : hp("weight_decay_rate");
    const Array u = beta == 0 ? grad : ops::add(grad, data * beta);
    const Array rate = lars_skip() ? ops::scalar_like(lr, data)
                                   : lars_rate(data, grad, lr, hp("eta"), beta, hp("eps"), hp("clip") != 0);
    const Array& v = state("v", data);
    v.assign(v * hp("momentum") + ops::mul(u, rate.astype(u.dtype())));
    ops::add_to(data, -v);
  }
};
}  // namespace

LARS::LARS(const LARSOptions& options) : Optimizer(options.lr, options.weight_decay_rate) {
  hyperparam().define("momentum", require_unit_interval(options.momentum, "LARS", "momentum"));
  hyperparam().define("eta", require_nonnegative(options.eta, "LARS", "eta"));
  hyperparam().define("eps", require_nonnegative(options.eps, "LARS", "eps"));
  hyperparam().define("clip", options.clip ? 1 : 0);
}

std::unique_ptr<UpdateRule> LARS::create_update_rule() { return std::make_unique<LARSRule>(shared_hyperparam()); }

}  // namespace kusari::optimizers
