#include <kusari/optimizers/update_rule.h>

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
  if (grad.shape() != param.shape()) {
    throw ShapeError(cat("UpdateRule::update: expected a gradient of shape ", param.shape(), " for parameter '",
                         param.name(), "', got ", grad.shape()));
  }
  ++t_;
  hooks_.run(HookTiming::pre, *this, param, grad);
  if (fp32_update_ && is_half_precision(param.dtype())) {
    auto master = states_.find(kMaster);
    if (master == states_.end()) master = states_.emplace(kMaster, param.data().astype(Dtype::float32, true)).first;
    require_shape(kMaster, master->second, param.shape());
    if (master->second.dtype() != Dtype::float32) master->second = master->second.astype(Dtype::float32);
    master->second = master->second.to(param.device());  // loaded from a snapshot: on the host
    update_core(master->second, grad.astype(Dtype::float32));
    param.data().assign(master->second);
  } else {
    update_core(param.data(), grad.astype(param.dtype()));
  }
  hooks_.run(HookTiming::post, *this, param, grad);
}

const Array& UpdateRule::state(const std::string& name, const Array& like) {
  auto it = states_.find(name);
  if (it == states_.end()) {
    it = states_.emplace(name, Array::zeros(like.shape(), like.dtype(), like.device())).first;
    return it->second;
  }
  require_shape(name, it->second, like.shape());
  if (it->second.dtype() != like.dtype()) it->second = it->second.astype(like.dtype());
  it->second = it->second.to(like.device());  // loaded from a snapshot: on the host
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
