#include <kusari/optimizers/rmsprop_warmup.h>

#include <algorithm>
#include <cmath>

#include <kusari/kernels/routines.h>

namespace kusari::optimizers {

double warmup_alpha_sgd(double epoch, double center, double period) {
  if (epoch < center) return 0.5 * std::exp(2 * (epoch - center) / period);
  return std::min(1.0, 0.5 + (epoch - center) / period);
}

namespace {
// α_RMS from α_SGD and the hyperparameters of `hp`.
double alpha_rms_of(double alpha_sgd, const Hyperparameter& hp) {
  const double lr = hp.get("lr");
  return lr == 0 ? 0 : (1 - alpha_sgd) * hp.get("lr_rms") / lr;
}

class RMSpropWarmupRule : public UpdateRule {
 public:
  RMSpropWarmupRule(std::shared_ptr<const Hyperparameter> parent, std::function<double()> epoch)
      : UpdateRule(std::move(parent), {"m", "D"}), epoch_(std::move(epoch)) {}

 protected:
  void update_core(const Array& data, const Array& grad) override {
    const double mu2 = hp("rms_decay");
    const double a_sgd = warmup_alpha_sgd(epoch_(), hp("center"), hp("period"));
    const double a_rms = alpha_rms_of(a_sgd, hyperparam());
    const Array g = with_weight_decay(data, grad);
    const Array& m = state("m", data);
    const Array& d = state("D", data);
    m.assign(m * mu2 + ops::square(g) * (1 - mu2));
    const Array step = g * a_sgd + g * a_rms / (ops::sqrt(m) + hp("eps"));
    d.assign(d * hp("momentum") - step);
    ops::add_to(data, d * hp("lr"));
  }

 private:
  std::function<double()> epoch_;  // reads the owning optimizer's epoch_detail()
};
}  // namespace

RMSpropWarmup::RMSpropWarmup(const RMSpropWarmupOptions& options) : Optimizer(options.lr, options.weight_decay_rate) {
  hyperparam().define("momentum", require_unit_interval(options.momentum, "RMSpropWarmup", "momentum"));
  hyperparam().define("rms_decay", require_unit_interval(options.rms_decay, "RMSpropWarmup", "rms_decay"));
  hyperparam().define("eps", require_nonnegative(options.eps, "RMSpropWarmup", "eps"));
  hyperparam().define("lr_rms", require_nonnegative(options.lr_rms, "RMSpropWarmup", "lr_rms"));
  hyperparam().define("center", options.center);
  if (!(options.period > 0)) throw ValueError(cat("RMSpropWarmup: expected period > 0, got ", options.period));
  hyperparam().define("period", options.period);
}

double RMSpropWarmup::alpha_sgd() const {
  return warmup_alpha_sgd(epoch_detail(), hyperparam().get("center"), hyperparam().get("period"));
}

double RMSpropWarmup::alpha_rms() const { return alpha_rms_of(alpha_sgd(), hyperparam()); }

std::unique_ptr<UpdateRule> RMSpropWarmup::create_update_rule() {
  return std::make_unique<RMSpropWarmupRule>(shared_hyperparam(), [this] { return epoch_detail(); });
}

}  // namespace kusari::optimizers
