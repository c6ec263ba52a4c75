#pragma once
// Optimizer: updates the parameters of a link with one UpdateRule per parameter, runs optimizer
// hooks around the rules, counts steps and epochs, and handles loss scaling (Chainer's Optimizer).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/links/link.h>
#include <kusari/optimizers/gradient_synchronizer.h>
#include <kusari/optimizers/hyperparameter.h>
#include <kusari/optimizers/loss_scaler.h>
#include <kusari/optimizers/update_rule.h>

namespace kusari::optimizers {

// One parameter about to be updated: hooks read and modify `grad` in place.
struct KUSARI_API GradientEntry {
  std::string name;   // the parameter's path ("/conv1/W")
  Variable param;     // the parameter
  Array grad;         // its gradient, divided by the loss scale (float32 for half parameters when
                      // loss scaling or use_fp32_update is on, else the parameter's own gradient)
  UpdateRule* rule;   // the parameter's rule (owned by the optimizer)
};

class Optimizer;
// A hook over every parameter with a gradient, in sorted name order.
using OptimizerHook = std::function<void(Optimizer& optimizer, std::vector<GradientEntry>& entries)>;
// Turns this process's "all gradients are finite" into the decision every process shares (the
// identity by default; a distributed wrapper all-reduces it).
using FiniteCheck = std::function<bool(bool locally_finite)>;

// Base of every optimizer.
class KUSARI_API Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Attaches the optimizer to `target` and creates a rule for each of its parameters (also the
  // uninitialised ones; parameters added later get theirs at the next update).
  void setup(std::shared_ptr<links::Link> target);
  // The link being optimized (null before setup).
  const std::shared_ptr<links::Link>& target() const { return target_; }

  // The optimizer-wide hyperparameters every rule inherits.
  Hyperparameter& hyperparam() { return *hyperparam_; }
  // Read-only hyperparameters.
  const Hyperparameter& hyperparam() const { return *hyperparam_; }
  // The learning rate.
  double lr() const { return hyperparam_->get("lr"); }
  // Sets the learning rate (what a schedule calls every iteration).
  void set_lr(double lr) { hyperparam_->set("lr", lr); }
  // The coupled L2 rate λ (g += λw), or the decoupled decay where an optimizer says so.
  double weight_decay_rate() const { return hyperparam_->get("weight_decay_rate"); }
  // Sets the weight decay rate.
  void set_weight_decay_rate(double rate) { hyperparam_->set("weight_decay_rate", rate); }

  // The rule of the parameter at `path` ("/l1/W"); throws ValueError if the target has no such parameter.
  UpdateRule& update_rule(const std::string& path);
  // Every rule with its parameter path, sorted by path (rules are created for new parameters first).
  std::vector<std::pair<std::string, UpdateRule*>> update_rules();

  // One step from the gradients already computed: lets the gradient synchronizer (if any) make them
  // agree across processes or skip the step, divides them by the loss scale, skips the step (and
  // lowers a dynamic scale) if any is inf/NaN, runs the pre hooks, increments t, applies each enabled
  // rule in sorted name order to every parameter with a gradient, runs the post hooks. Returns
  // whether the step was taken.
  bool update();
  // Clears the gradients, computes loss = lossfun(), backpropagates it times the loss scale, and
  // calls update(). Returns whether the step was taken.
  bool update(const std::function<Variable()>& lossfun);

  // Steps taken.
  int64_t t() const { return t_; }
  // Epochs completed (advanced by new_epoch).
  int64_t epoch() const { return epoch_; }
  // Marks the end of an epoch.
  void new_epoch() { ++epoch_; }
  // The fractional epoch the caller last set (schedules and the RMSprop warm-up read it).
  double epoch_detail() const { return epoch_detail_; }
  // Sets the fractional epoch (the training loop calls this every iteration).
  void set_epoch_detail(double epoch_detail) { epoch_detail_ = epoch_detail; }

  // Registers a hook under a unique name; hooks of one timing run in registration order.
  void add_hook(OptimizerHook hook, const std::string& name, HookTiming timing = HookTiming::pre);
  // Removes the hook `name`; throws ValueError if there is none.
  void remove_hook(const std::string& name);

  // Turns float32 master weights on or off for every rule, present and future.
  void use_fp32_update(bool enabled = true);
  // Installs a loss scaler (fixed or dynamic).
  void set_loss_scaler(const LossScaler& scaler) { loss_scaler_ = scaler; }
  // The loss scaler, if any.
  const std::optional<LossScaler>& loss_scaler() const { return loss_scaler_; }
  // The current loss scale (1 without a scaler).
  double loss_scale() const { return loss_scaler_ ? loss_scaler_->scale() : 1.0; }
  // Replaces how the finiteness of gradients is agreed on (see FiniteCheck).
  void set_finite_check(FiniteCheck check) { finite_check_ = std::move(check); }
  // Installs what makes gradients agree across processes (null removes it); it is attached to the
  // current target at once, if there is one, and to every later setup() target.
  void set_gradient_synchronizer(std::shared_ptr<GradientSynchronizer> synchronizer);
  // The installed gradient synchronizer (null without one).
  const std::shared_ptr<GradientSynchronizer>& gradient_synchronizer() const { return synchronizer_; }

  // Saves or loads t, epoch, every rule's state and step count (under the parameter's path) and
  // the loss scaler.
  virtual void serialize(Serializer& serializer);

 protected:
  // Defines the hyperparameters every optimizer has: lr and weight_decay_rate.
  Optimizer(double lr, double weight_decay_rate);
  // A new rule for one parameter, inheriting from hyperparam().
  virtual std::unique_ptr<UpdateRule> create_update_rule() = 0;
  // The optimizer's hyperparameters as the parent every new rule takes.
  std::shared_ptr<const Hyperparameter> shared_hyperparam() const { return hyperparam_; }

 private:
  void require_target(const char* op) const;
  // Creates the missing rules for the target's current parameters.
  void create_missing_rules();
  // Rebuilds the parameter list when the links' structure changed since it was built.
  void refresh_parameters();
  // The target's gradients, each its own contiguous float32 (or fp32-update) array, divided by the
  // loss scale they were computed with.
  std::vector<GradientEntry> gather_gradients(double scale);

  // An initialised parameter of the target with its path and rule.
  struct ParameterRecord {
    std::string path;
    Variable param;
    UpdateRule* rule;
  };

  std::shared_ptr<Hyperparameter> hyperparam_;
  std::shared_ptr<links::Link> target_;
  std::map<std::string, std::unique_ptr<UpdateRule>> rules_;
  std::vector<ParameterRecord> parameters_;  // namedparams() of the target with rules, in path order
  std::optional<uint64_t> parameters_version_;  // Link::structure_version() when parameters_ was built
  HookList<OptimizerHook> hooks_;
  std::optional<LossScaler> loss_scaler_;
  FiniteCheck finite_check_ = [](bool locally_finite) { return locally_finite; };
  std::shared_ptr<GradientSynchronizer> synchronizer_;
  int64_t t_ = 0;
  int64_t epoch_ = 0;
  double epoch_detail_ = 0;
  bool fp32_update_ = false;
};

// Reads a required non-negative hyperparameter argument; throws ValueError naming the optimizer.
KUSARI_API double require_nonnegative(double value, const char* optimizer, const char* name);
// Reads a required argument in [0, 1); throws ValueError naming the optimizer.
KUSARI_API double require_unit_interval(double value, const char* optimizer, const char* name);

}  // namespace kusari::optimizers
