#include <kusari/optimizers/optimizer.h>

#include <algorithm>
#include <tuple>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/core/timeline.h>
#include <kusari/kernels/optimizer_routines.h>
#include <kusari/kernels/routines.h>
#include <kusari/optimizers/numerics.h>

namespace kusari::optimizers {

namespace {
// The serializer scope of a parameter path: "/l1/W" is serializer["l1"]["W"].
Serializer& scope_of(Serializer& serializer, const std::string& path) {
  Serializer* scope = &serializer;
  size_t begin = 0;
  while (begin < path.size()) {
    const size_t end = std::min(path.find('/', begin), path.size());
    if (end > begin) scope = &(*scope)[path.substr(begin, end - begin)];
    begin = end + 1;
  }
  return *scope;
}

// Each entry's rule updates its parameter: on a device, the groupable rules of one class, device and
// update dtype together (one multi-tensor step a group where the class has one); the others, and every
// parameter on the host (where a group's kernel is each parameter's own routines, one after another),
// one by one.
void update_parameters(const std::vector<GradientEntry>& entries) {
  struct Group {
    std::type_index rule_class;
    Device device;
    Dtype dtype;
    std::vector<UpdateRule*> rules;
    std::vector<Variable> params;
    std::vector<Array> grads;
  };
  std::vector<Group> groups;
  for (const GradientEntry& e : entries) {
    if (!e.rule->groupable() || e.param.device().type == DeviceType::cpu) {
      e.rule->update(e.param, e.grad);
      continue;
    }
    const std::type_index rule_class(typeid(*e.rule));
    const Dtype dtype = e.rule->fp32_update() && is_half_precision(e.param.dtype()) ? Dtype::float32 : e.param.dtype();
    auto group = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.rule_class == rule_class && g.device == e.param.device() && g.dtype == dtype;
    });
    if (group == groups.end()) group = groups.insert(groups.end(), Group{rule_class, e.param.device(), dtype, {}, {}, {}});
    group->rules.push_back(e.rule);
    group->params.push_back(e.param);
    group->grads.push_back(e.grad);
  }
  for (const Group& g : groups) UpdateRule::update_together(g.rules, g.params, g.grads);
}
}  // namespace

double require_nonnegative(double value, const char* optimizer, const char* name) {
  if (!(value >= 0)) throw ValueError(cat(optimizer, ": expected ", name, " >= 0, got ", value));
  return value;
}

double require_unit_interval(double value, const char* optimizer, const char* name) {
  if (!(value >= 0 && value < 1)) throw ValueError(cat(optimizer, ": expected ", name, " in [0, 1), got ", value));
  return value;
}

Optimizer::Optimizer(double lr, double weight_decay_rate) : hyperparam_(std::make_shared<Hyperparameter>()) {
  hyperparam_->define("lr", require_nonnegative(lr, "Optimizer", "lr"));
  hyperparam_->define("weight_decay_rate", require_nonnegative(weight_decay_rate, "Optimizer", "weight_decay_rate"));
}

void Optimizer::setup(std::shared_ptr<links::Link> target) {
  if (!target) throw ValueError("Optimizer::setup: expected a link, got null");
  target_ = std::move(target);
  rules_.clear();
  parameters_version_.reset();
  create_missing_rules();
  if (synchronizer_) synchronizer_->attach(target_);
}

void Optimizer::set_gradient_synchronizer(std::shared_ptr<GradientSynchronizer> synchronizer) {
  synchronizer_ = std::move(synchronizer);
  if (synchronizer_ && target_) synchronizer_->attach(target_);
}

void Optimizer::require_target(const char* op) const {
  if (!target_) throw ValueError(cat("Optimizer::", op, ": call setup(link) first"));
}

void Optimizer::create_missing_rules() {
  for (const auto& [path, param] : target_->namedparams(true)) {
    if (rules_.contains(path)) continue;
    std::unique_ptr<UpdateRule> rule = create_update_rule();
    rule->use_fp32_update(fp32_update_);
    rules_.emplace(path, std::move(rule));
  }
}

UpdateRule& Optimizer::update_rule(const std::string& path) {
  require_target("update_rule");
  create_missing_rules();
  auto it = rules_.find(path);
  if (it == rules_.end()) throw ValueError(cat("Optimizer::update_rule: the target has no parameter '", path, "'"));
  return *it->second;
}

std::vector<std::pair<std::string, UpdateRule*>> Optimizer::update_rules() {
  require_target("update_rules");
  create_missing_rules();
  std::vector<std::pair<std::string, UpdateRule*>> out;
  for (auto& [path, rule] : rules_) out.emplace_back(path, rule.get());
  return out;
}

void Optimizer::refresh_parameters() {
  const uint64_t version = links::Link::structure_version();
  if (parameters_version_ == version) return;
  create_missing_rules();
  parameters_.clear();
  for (auto& [path, param] : target_->namedparams()) parameters_.push_back({path, param, rules_.at(path).get()});
  parameters_version_ = version;
}

std::vector<GradientEntry> Optimizer::gather_gradients(double scale) {
  refresh_parameters();
  std::vector<GradientEntry> entries;
  entries.reserve(parameters_.size());
  for (ParameterRecord& record : parameters_) {
    Array grad = record.param.grad();
    if (grad.defined()) entries.push_back({record.path, record.param, std::move(grad), record.rule});
  }
  // Hooks and the unscaling modify gradients in place, but backward may hand one array to several
  // parameters (y = a + b) or a broadcast view: each parameter gets its own contiguous gradient
  // (the first in path order keeps a shared one).
  std::vector<std::tuple<const Storage*, int64_t, size_t>> places;
  places.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) places.emplace_back(entries[i].grad.storage().get(), entries[i].grad.offset(), i);
  std::sort(places.begin(), places.end());
  for (size_t k = 0; k < places.size(); ++k) {
    GradientEntry& e = entries[std::get<2>(places[k])];
    const bool shared = k > 0 && std::get<0>(places[k]) == std::get<0>(places[k - 1]) &&
                        std::get<1>(places[k]) == std::get<1>(places[k - 1]);
    if (shared || !e.grad.is_contiguous()) {
      e.grad = e.grad.copy();
      e.param.set_grad(e.grad);
    }
  }
  // Half gradients that the loss scale or a float32 update needs in float32 are widened, and unscaled on
  // the way, together (one multi-tensor launch a device); the others are unscaled in place.
  std::vector<Array> halves, widened;
  for (GradientEntry& e : entries) {
    if (is_half_precision(e.grad.dtype()) && (loss_scaler_ || e.rule->fp32_update())) {
      halves.push_back(e.grad);
      e.grad = Array::empty(e.grad.shape(), Dtype::float32, e.grad.device());
      widened.push_back(e.grad);
    } else if (scale != 1) {
      e.grad.assign(e.grad / scale);
    }
  }
  ops::copy_tensors(halves, widened, scale);
  return entries;
}

bool Optimizer::update() {
  require_target("update");
  auto guard = no_backprop_mode();
  double scale = loss_scale();
  if (synchronizer_) {
    const std::optional<double> computed_with = synchronizer_->synchronize(scale);
    if (!computed_with) return false;
    scale = *computed_with;
  }
  std::vector<GradientEntry> entries = gather_gradients(scale);
  if (loss_scaler_ && loss_scaler_->is_dynamic()) {
    std::vector<Array> grads;
    for (const GradientEntry& e : entries) grads.push_back(e.grad);
    const bool finite = finite_check_(all_finite(grads));
    loss_scaler_->record(finite);
    if (!finite) return false;
  }
  hooks_.run(HookTiming::pre, *this, entries);
  ++t_;
  update_parameters(entries);
  hooks_.run(HookTiming::post, *this, entries);
  return true;
}

bool Optimizer::update(const std::function<Variable()>& lossfun) {
  require_target("update");
  target_->cleargrads();
  Variable loss;
  {
    const timeline::Span span("forward");
    loss = lossfun();
  }
  {
    const timeline::Span span("backward");
    BackwardOptions options;
    options.loss_scale = loss_scale();
    loss.backward(options);
  }
  const timeline::Span span("update");
  return update();
}

void Optimizer::add_hook(OptimizerHook hook, const std::string& name, HookTiming timing) {
  hooks_.add(std::move(hook), name, timing, "Optimizer");
}

void Optimizer::remove_hook(const std::string& name) { hooks_.remove(name, "Optimizer"); }

void Optimizer::use_fp32_update(bool enabled) {
  fp32_update_ = enabled;
  for (auto& [path, rule] : rules_) rule->use_fp32_update(enabled);
}

void Optimizer::serialize(Serializer& serializer) {
  serialize_count(serializer, "t", t_, "Optimizer");
  serialize_count(serializer, "epoch", epoch_, "Optimizer");
  if (loss_scaler_) loss_scaler_->serialize(serializer);
  if (!target_) return;
  create_missing_rules();
  for (auto& [path, rule] : rules_) rule->serialize(scope_of(serializer, path));
}

}  // namespace kusari::optimizers
