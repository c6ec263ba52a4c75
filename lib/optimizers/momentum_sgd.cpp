#include <kusari/optimizers/momentum_sgd.h>

#include <kusari/kernels/routines.h>

namespace kusari::optimizers {

namespace {
class MomentumSGDRule : public UpdateRule {
 public:
  explicit MomentumSGDRule(std::shared_ptr<const Hyperparameter> parent) : UpdateRule(std::move(parent), {"v"}) {}

  void serialize(Serializer& serializer) override {
    UpdateRule::serialize(serializer);
    serializer("last_lr", last_lr_);
  }

 protected:
  void update_core(const Array& data, const Array& grad) override {
    const double lr = hp("lr");
    const Array& v = state("v", data);
    double m = hp("momentum");
    // Momentum correction folds the lr ratio into the decay of v (v holds lr-scaled steps).
    if (hp("momentum_correction") != 0 && last_lr_ > 0) m *= lr / last_lr_;
    last_lr_ = lr;
    ops::momentum_step(data, v, with_weight_decay(data, grad), m, lr);
  }

 private:
  double last_lr_ = 0;  // lr of the previous step (0 before the first)
};
}  // namespace

MomentumSGD::MomentumSGD(double lr, double momentum, double weight_decay_rate) : Optimizer(lr, weight_decay_rate) {
  hyperparam().define("momentum", require_unit_interval(momentum, "MomentumSGD", "momentum"));
  hyperparam().define("momentum_correction", 0);
}

std::unique_ptr<UpdateRule> MomentumSGD::create_update_rule() {
  return std::make_unique<MomentumSGDRule>(shared_hyperparam());
}

}  // namespace kusari::optimizers
