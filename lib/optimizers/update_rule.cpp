#include <kusari/optimizers/update_rule.h>

#include <typeinfo>

#include <kusari/kernels/optimizer_routines.h>
#include <kusari/kernels/routines.h>

namespace kusari::optimizers {

namespace {
// The state key of the float32 master copy of a half-precision parameter.
const std::string kMaster = "master";

// Throws ShapeError when a state array (loaded from a checkpoint, say) does not fit its parameter.
void require_shape(const std::string& name, const Array& state, const Shape& shape) {
  if (state.shape() != shape) {
    throw ShapeError(cat("UpdateRule: state '", name, "' has shape ", state.shape(), ", expected the parameter's shape ",
                         shape));
  }
}
}  // namespace

bool is_half_precision(Dtype dtype) { return dtype == Dtype::float16 || dtype == Dtype::bfloat16; }

UpdateRule::UpdateRule(std::shared_ptr<const Hyperparameter> parent, std::vector<std::string> state_names)
    : hyperparam_(std::move(parent)), state_names_(std::move(state_names)) {
  state_names_.push_back(kMaster);
}

void UpdateRule::add_hook(Hook hook, const std::string& name, HookTiming timing) {
  hooks_.add(std::move(hook), name, timing, "UpdateRule");
}

void UpdateRule::remove_hook(const std::string& name) { hooks_.remove(name, "UpdateRule"); }

void UpdateRule::update(const Variable& param, const Array& grad) {
  if (!enabled_) return;
  begin_update(param, grad);
  hooks_.run(HookTiming::pre, *this, param, grad);
  const Array data = update_target(param);
  update_core(data, grad.astype(data.dtype()));
  finish_update(param, data);
  hooks_.run(HookTiming::post, *this, param, grad);
}

void UpdateRule::update_together(const std::vector<UpdateRule*>& rules, const std::vector<Variable>& params,
                                 const std::vector<Array>& grads) {
  if (rules.empty()) return;
  std::vector<Array> data, widened;
  for (size_t k = 0; k < rules.size(); ++k) {
    if (!rules[k]->groupable() || typeid(*rules[k]) != typeid(*rules.front())) {
      throw ValueError(cat("UpdateRule::update_together: expected enabled rules of one class without hooks; rule ", k,
                           " of parameter '", params[k].name(), "' is not"));
    }
    rules[k]->begin_update(params[k], grads[k]);
    data.push_back(rules[k]->update_target(params[k]));
  }
  // Gradients of another dtype than what they update (half gradients of float32 master copies, where the
  // optimizer has not widened them when it gathered them) are widened in one multi-tensor copy, and the
  // masters' new values written back in another.
  std::vector<Array> narrow, wide;
  for (size_t k = 0; k < rules.size(); ++k) {
    if (grads[k].dtype() == data[k].dtype()) {
      widened.push_back(grads[k]);
      continue;
    }
    widened.push_back(Array::empty(grads[k].shape(), data[k].dtype(), grads[k].device()));
    narrow.push_back(grads[k]);
    wide.push_back(widened.back());
  }
  ops::copy_tensors(narrow, wide);
  rules.front()->update_core_together(rules, data, widened);
  std::vector<Array> masters, targets;
  for (size_t k = 0; k < rules.size(); ++k) {
    if (data[k].storage() == params[k].data().storage()) continue;
    masters.push_back(data[k]);
    targets.push_back(params[k].data());
  }
  ops::copy_tensors(masters, targets);
}

void UpdateRule::update_core_together(const std::vector<UpdateRule*>& rules, const std::vector<Array>& data,
                                      const std::vector<Array>& grads) {
  for (size_t k = 0; k < rules.size(); ++k) rules[k]->update_core(data[k], grads[k]);
}

void UpdateRule::begin_update(const Variable& param, const Array& grad) {
  if (grad.shape() != param.shape()) {
    throw ShapeError(cat("UpdateRule::update: expected a gradient of shape ", param.shape(), " for parameter '",
                         param.name(), "', got ", grad.shape()));
  }
  ++t_;
}

Array UpdateRule::update_target(const Variable& param) {
  if (!fp32_update_ || !is_half_precision(param.dtype())) return param.data();
  auto master = states_.find(kMaster);
  if (master == states_.end()) master = states_.emplace(kMaster, param.data().astype(Dtype::float32, true)).first;
  require_shape(kMaster, master->second, param.shape());
  if (master->second.dtype() != Dtype::float32) master->second = master->second.astype(Dtype::float32);
  // A master loaded from a snapshot is on the host.
  if (master->second.device() != param.device()) master->second = master->second.to(param.device());
  return master->second;
}

void UpdateRule::finish_update(const Variable& param, const Array& data) const {
  if (data.storage() != param.data().storage()) param.data().assign(data);
}

const Array& UpdateRule::state(const std::string& name, const Array& like) {
  auto it = states_.find(name);
  if (it == states_.end()) {
    it = states_.emplace(name, Array::zeros(like.shape(), like.dtype(), like.device())).first;
    return it->second;
  }
  require_shape(name, it->second, like.shape());
  if (it->second.dtype() != like.dtype()) it->second = it->second.astype(like.dtype());
  // A state loaded from a snapshot is on the host.
  if (it->second.device() != like.device()) it->second = it->second.to(like.device());
  return it->second;
}

Array UpdateRule::with_weight_decay(const Array& data, const Array& grad) const {
  const double rate = hp("weight_decay_rate");
  return rate == 0 ? grad : ops::add(grad, data * rate);
}

void UpdateRule::serialize(Serializer& serializer) {
  serialize_count(serializer, "t", t_, "UpdateRule");
  // Every declared state is visited, an absent one as an undefined array, so a strict reader (load_npz)
  // finds each key it asks for, and loading drops states the saved rule did not have.
  for (const std::string& name : state_names_) {
    auto it = states_.find(name);
    Array value = it == states_.end() ? Array() : it->second;
    serializer(name, value);
    if (!serializer.is_loading()) continue;
    if (value.defined()) {
      states_[name] = value;
    } else {
      states_.erase(name);
    }
  }
}

}  // namespace kusari::optimizers
