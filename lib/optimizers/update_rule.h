#pragma once
// UpdateRule: how one parameter is updated — its hyperparameters (inherited from the optimizer),
// its state arrays, its own hooks and step count (Chainer's UpdateRule).

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>
#include <kusari/core/serializer.h>
#include <kusari/optimizers/hook_list.h>
#include <kusari/optimizers/hyperparameter.h>

namespace kusari::optimizers {

// The update of one parameter; each optimizer derives one and implements update_core.
class KUSARI_API UpdateRule {
 public:
  // Called with the rule, the parameter and the gradient the rule is about to use (or just used).
  using Hook = std::function<void(UpdateRule& rule, const Variable& param, const Array& grad)>;

  // A rule whose hyperparameters inherit from `parent`; `state_names` lists every state array the
  // rule may create (so a fresh rule knows what to load).
  UpdateRule(std::shared_ptr<const Hyperparameter> parent, std::vector<std::string> state_names);
  virtual ~UpdateRule() = default;
  UpdateRule(const UpdateRule&) = delete;
  UpdateRule& operator=(const UpdateRule&) = delete;

  // This parameter's hyperparameters; set() overrides the optimizer's value for it alone.
  Hyperparameter& hyperparam() { return hyperparam_; }
  // Read-only hyperparameters.
  const Hyperparameter& hyperparam() const { return hyperparam_; }
  // Whether update() changes the parameter (a disabled rule leaves it frozen).
  bool enabled() const { return enabled_; }
  // Enables or disables the rule.
  void set_enabled(bool enabled) { enabled_ = enabled; }
  // Makes float16/bfloat16 parameters update through a float32 master copy kept in the state.
  void use_fp32_update(bool enabled = true) { fp32_update_ = enabled; }
  // Whether use_fp32_update is on.
  bool fp32_update() const { return fp32_update_; }
  // Whether the WeightDecay and Lasso hooks leave this parameter alone (biases, batch-norm γ/β).
  bool weight_decay_exempt() const { return weight_decay_exempt_; }
  // Sets the weight-decay exemption.
  void set_weight_decay_exempt(bool exempt) { weight_decay_exempt_ = exempt; }
  // Whether LARS, LAMB and GradientLARS use trust ratio 1 and no weight decay for this parameter.
  bool lars_skip() const { return lars_skip_; }
  // Sets the LARS skip mark.
  void set_lars_skip(bool skip) { lars_skip_ = skip; }
  // Number of updates this rule has applied.
  int64_t t() const { return t_; }

  // Registers a hook under a unique name, run before or after this rule's update in registration order.
  void add_hook(Hook hook, const std::string& name, HookTiming timing = HookTiming::pre);
  // Removes the hook `name`; throws ValueError if there is none.
  void remove_hook(const std::string& name);

  // One step on `param` with gradient `grad` (same shape; float32 allowed for half parameters):
  // nothing when disabled; else t += 1, pre hooks, the update (through the master copy when
  // use_fp32_update applies), post hooks.
  void update(const Variable& param, const Array& grad);
  // Whether the rule may update its parameter in a group with other rules of its class (update_together):
  // enabled and without hooks of its own.
  bool groupable() const { return enabled_ && hooks_.empty(); }
  // update() of several parameters, each by its own rule (groupable, all of one class), the formula
  // applied to all of them in one update_core_together call: a multi-tensor step where the class has one.
  static void update_together(const std::vector<UpdateRule*>& rules, const std::vector<Variable>& params,
                              const std::vector<Array>& grads);

  // The state arrays created so far, by name.
  const std::map<std::string, Array>& states() const { return states_; }
  // Saves or loads t and every declared state array (an absent state as an undefined array; a fresh
  // rule loads the arrays the reader has).
  virtual void serialize(Serializer& serializer);

 protected:
  // Updates `data` in place from `grad` (same shape and dtype): the optimizer's formula.
  virtual void update_core(const Array& data, const Array& grad) = 0;
  // update_core of rules[k] (each of this rule's class) on data[k] with grads[k], for every k; by
  // default one update_core after another, overridden where a class updates many tensors at once.
  virtual void update_core_together(const std::vector<UpdateRule*>& rules, const std::vector<Array>& data,
                                    const std::vector<Array>& grads);
  // The state `name`, created as zeros shaped like `like` (and of its dtype) at first use; a loaded one
  // is brought to like's dtype and device.
  const Array& state(const std::string& name, const Array& like);
  // The hyperparameter `name` of this rule.
  double hp(std::string_view name) const { return hyperparam_.get(name); }
  // grad + weight_decay_rate · data (coupled L2), or grad itself when the rate is 0.
  Array with_weight_decay(const Array& data, const Array& grad) const;

 private:
  // The update's first part: the gradient's shape checked against the parameter's, t += 1.
  void begin_update(const Variable& param, const Array& grad);
  // The array the formula updates: the float32 master copy (made at first use) where use_fp32_update
  // applies, the parameter's data otherwise.
  Array update_target(const Variable& param);
  // The update's last part: the parameter takes the master copy's new values (where there is one).
  void finish_update(const Variable& param, const Array& data) const;

  Hyperparameter hyperparam_;
  std::vector<std::string> state_names_;
  std::map<std::string, Array> states_;
  HookList<Hook> hooks_;
  int64_t t_ = 0;
  bool enabled_ = true;
  bool fp32_update_ = false;
  bool weight_decay_exempt_ = false;
  bool lars_skip_ = false;
};

// Whether the dtype is float16 or bfloat16 (the dtypes use_fp32_update widens).
KUSARI_API bool is_half_precision(Dtype dtype);

}  // namespace kusari::optimizers
