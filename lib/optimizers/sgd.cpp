#include <kusari/optimizers/sgd.h>

#include <kusari/kernels/routines.h>

namespace kusari::optimizers {

namespace {
class SGDRule : public UpdateRule {
 public:
  explicit SGDRule(std::shared_ptr<const Hyperparameter> parent) : UpdateRule(std::move(parent), {}) {}

 protected:
  void update_core(const Array& data, const Array& grad) override {
    ops::axpby(data, 1, with_weight_decay(data, grad), -hp("lr"));
  }
};
}  // namespace

SGD::SGD(double lr, double weight_decay_rate) : Optimizer(lr, weight_decay_rate) {}

std::unique_ptr<UpdateRule> SGD::create_update_rule() { return std::make_unique<SGDRule>(shared_hyperparam()); }

}  // namespace kusari::optimizers
