#include <kusari/optimizers/nesterov_ag.h>

#include <kusari/kernels/routines.h>

namespace kusari::optimizers {

namespace {
class NesterovAGRule : public UpdateRule {
 public:
  explicit NesterovAGRule(std::shared_ptr<const Hyperparameter> parent) : UpdateRule(std::move(parent), {"v"}) {}

 protected:
  void update_core(const Array& data, const Array& grad) override {
    const double lr = hp("lr"), m = hp("momentum");
    const Array g = with_weight_decay(data, grad);
    const Array& v = state("v", data);
    v.assign(v * m - g * lr);
    ops::add_to(data, v * (m * m) - g * ((1 + m) * lr));
  }
};
}  // namespace

NesterovAG::NesterovAG(double lr, double momentum, double weight_decay_rate) : Optimizer(lr, weight_decay_rate) {
  hyperparam().define("momentum", require_unit_interval(momentum, "NesterovAG", "momentum"));
}

std::unique_ptr<UpdateRule> NesterovAG::create_update_rule() {
  return std::make_unique<NesterovAGRule>(shared_hyperparam());
}

}  // namespace kusari::optimizers
