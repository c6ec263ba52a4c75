#include <kusari/optimizers/momentum_sgd.h>

#include <kusari/kernels/optimizer_routines.h>
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
  void update_core(const Array& data, const Array& grad) override { update_core_together({this}, {data}, {grad}); }

  // One momentum_steps call for every rule's parameter, each with its own hyperparameters.
  void update_core_together(const std::vector<UpdateRule*>& rules, const std::vector<Array>& data,
                            const std::vector<Array>& grads) override {
    MomentumTensors t;
    std::vector<double> rates;
    for (size_t k = 0; k < rules.size(); ++k) {
      auto* rule = static_cast<MomentumSGDRule*>(rules[k]);
      const double lr = rule->hp("lr");
      double m = rule->hp("momentum");
      // Momentum correction folds the lr ratio into the decay of v (v holds lr-scaled steps).
      if (rule->hp("momentum_correction") != 0 && rule->last_lr_ > 0) m *= lr / rule->last_lr_;
      rule->last_lr_ = lr;
      t.w.push_back(data[k]);
      t.v.push_back(rule->state("v", data[k]));
      t.g.push_back(grads[k]);
      t.momentum.push_back(m);
      t.weight_decay.push_back(rule->hp("weight_decay_rate"));
      rates.push_back(lr);
    }
    t.rate = Array::from_vector(rates, {static_cast<int64_t>(rates.size())}, Dtype::float64, data.front().device());
    ops::momentum_steps(t);
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
