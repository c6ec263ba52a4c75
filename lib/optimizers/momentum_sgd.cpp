#include <kusari/optimizers/momentum_sgd.h>

#include <utility>
#include <vector>

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
  void update_core(const Array& data, const Array& grad) override {
    const auto [momentum, lr] = step_coefficients();
    ops::momentum_step(data, state("v", data), with_weight_decay(data, grad), momentum, lr);
  }

  // One momentum_steps call for every rule's parameter, each with its own hyperparameters.
  void update_core_together(const std::vector<UpdateRule*>& rules, const std::vector<Array>& data,
                            const std::vector<Array>& grads) override {
    MomentumTensors t;
    std::vector<double> rates;
    for (std::vector<Array>* arrays : {&t.w, &t.v, &t.g}) arrays->reserve(rules.size());
    for (std::vector<double>* values : {&t.momentum, &t.weight_decay, &rates}) values->reserve(rules.size());
    for (size_t k = 0; k < rules.size(); ++k) {
      auto* rule = static_cast<MomentumSGDRule*>(rules[k]);
      const auto [momentum, lr] = rule->step_coefficients();
      t.w.push_back(data[k]);
      t.v.push_back(rule->state("v", data[k]));
      t.g.push_back(grads[k]);
      t.momentum.push_back(momentum);
      t.weight_decay.push_back(rule->hp("weight_decay_rate"));
      rates.push_back(lr);
    }
    t.rate = Array::from_vector(rates, {static_cast<int64_t>(rates.size())}, Dtype::float64, data.front().device());
    ops::momentum_steps(t);
  }

 private:
  // This step's {momentum, lr}: momentum correction folds the lr ratio into the decay of v (v holds
  // lr-scaled steps).
  std::pair<double, double> step_coefficients() {
    const double lr = hp("lr");
    double momentum = hp("momentum");
    if (hp("momentum_correction") != 0 && last_lr_ > 0) momentum *= lr / last_lr_;
    last_lr_ = lr;
    return {momentum, lr};
  }

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
