#include <kusari/links/link.h>

#include <algorithm>
#include <atomic>

#include <kusari/autograd/backprop_mode.h>

namespace kusari::links {

namespace {
std::atomic<uint64_t> structure_counter{0};
}  // namespace

uint64_t Link::structure_version() { return structure_counter.load(std::memory_order_acquire); }

void Link::structure_changed() { structure_counter.fetch_add(1, std::memory_order_acq_rel); }

Variable Link::forward(const Variable&) {
  throw ValueError(cat(type_name(), ": this link defines no one-input forward"));
}

void Link::require_new_name(const std::string& name) const {
  if (name.empty() || name.find('/') != std::string::npos) {
    throw ValueError(cat(type_name(), ": expected a non-empty name without '/', got '", name, "'"));
  }
  if (params_.contains(name) || persistents_.contains(name)) {
    throw ValueError(cat(type_name(), ": '", name, "' is already registered"));
  }
}

Variable Link::add_param(const std::string& name, Array data) {
  require_new_name(name);
  Variable v(std::move(data));
  v.set_name(name);
  params_[name] = ParamSlot{v, nullptr, v.dtype()};
  structure_changed();
  return v;
}

Variable Link::add_param(const std::string& name, const Shape& shape, const Initializer& init, Dtype dtype) {
  add_uninitialized_param(name, init, dtype);
  return initialize_param(name, shape);
}

void Link::add_uninitialized_param(const std::string& name, Initializer init, Dtype dtype) {
  require_new_name(name);
  params_[name] = ParamSlot{Variable(), std::move(init), dtype};
  structure_changed();
}

Variable Link::initialize_param(const std::string& name, const Shape& shape) {
  auto it = params_.find(name);
  if (it == params_.end()) throw ValueError(cat(type_name(), ": no parameter named '", name, "'"));
  ParamSlot& slot = it->second;
  if (slot.variable.defined()) {
    throw ValueError(cat(type_name(), ": parameter '", name, "' is already initialised with shape ",
                         slot.variable.shape()));
  }
  Array data = Array::zeros(shape, slot.dtype, slot.device.value_or(default_device()));
  if (slot.init) slot.init(data);
  slot.variable = Variable(std::move(data));
  slot.variable.set_name(name);
  structure_changed();
  return slot.variable;
}

bool Link::is_initialized(const std::string& name) const {
  auto it = params_.find(name);
  return it != params_.end() && it->second.variable.defined();
}

void Link::add_persistent(const std::string& name, Array value) {
  require_new_name(name);
  persistents_[name] = std::move(value);
}

Variable Link::param(const std::string& name) const {
  auto it = params_.find(name);
  if (it == params_.end()) throw ValueError(cat(type_name(), ": no parameter named '", name, "'"));
  return it->second.variable;
}

Array& Link::persistent(const std::string& name) {
  auto it = persistents_.find(name);
  if (it == persistents_.end()) throw ValueError(cat(type_name(), ": no persistent value named '", name, "'"));
  return it->second;
}

const Array& Link::persistent(const std::string& name) const {
  return const_cast<Link*>(this)->persistent(name);
}

void Link::collect_params(const std::string& prefix, bool include_uninitialized,
                          std::vector<std::pair<std::string, Variable>>& out) const {
  for (const auto& [name, slot] : params_) {
    if (slot.variable.defined() || include_uninitialized) out.emplace_back(prefix + "/" + name, slot.variable);
  }
  for (const auto& [name, link] : children()) link->collect_params(prefix + "/" + name, include_uninitialized, out);
}

std::vector<std::pair<std::string, Variable>> Link::namedparams(bool include_uninitialized) const {
  std::vector<std::pair<std::string, Variable>> out;
  collect_params("", include_uninitialized, out);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::vector<Variable> Link::params(bool include_uninitialized) const {
  std::vector<Variable> out;
  for (auto& [name, v] : namedparams(include_uninitialized)) out.push_back(v);
  return out;
}

void Link::collect_links(const std::string& prefix, std::vector<std::pair<std::string, const Link*>>& out) const {
  for (const auto& [name, link] : children()) {
    out.emplace_back(prefix + "/" + name, link.get());
    link->collect_links(prefix + "/" + name, out);
  }
}

std::vector<std::pair<std::string, const Link*>> Link::namedlinks(bool skip_self) const {
  std::vector<std::pair<std::string, const Link*>> out;
  if (!skip_self) out.emplace_back("/", this);
  collect_links("", out);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

void Link::for_each_param(const std::function<void(Variable&)>& visit) {
  for (auto& [name, slot] : params_) {
    if (slot.variable.defined()) visit(slot.variable);
  }
  for (const auto& [name, link] : children()) link->for_each_param(visit);
}

void Link::cleargrads() {
  for_each_param([](Variable& v) { v.cleargrad(); });
}

void Link::zerograds() {
  for_each_param([](Variable& v) { v.set_grad(Array::zeros(v.shape(), v.dtype(), v.device())); });
}

int64_t Link::count_params() const {
  int64_t n = 0;
  for (const auto& [name, v] : namedparams()) n += v.size();
  return n;
}

void Link::set_train(bool train) {
  train_ = train;
  for (const auto& [name, link] : children()) link->set_train(train);
}

void Link::serialize(Serializer& serializer) {
  for (auto& [name, slot] : params_) {
    if (!slot.variable.defined()) {  // saved as an undefined array, so a strict load finds the key
      Array loaded;
      serializer(name, loaded);
      if (!loaded.defined()) continue;
      slot.variable = Variable(loaded.astype(slot.dtype).to(slot.device.value_or(default_device())));
      slot.variable.set_name(name);
      structure_changed();
      continue;
    }
    Array data = slot.variable.data();
    serializer(name, data);
  }
  for (auto& [name, value] : persistents_) serializer(name, value);
  for (const auto& [name, link] : children()) link->serialize(serializer[name]);
}

void Link::copyparams(const Link& source) {
  const auto mine = namedparams(), theirs = source.namedparams();
  if (mine.size() != theirs.size()) {
    throw ShapeError(cat("copyparams: expected a link with ", mine.size(), " parameters, got ", theirs.size()));
  }
  for (size_t i = 0; i < mine.size(); ++i) {
    if (mine[i].first != theirs[i].first || mine[i].second.shape() != theirs[i].second.shape()) {
      throw ShapeError(cat("copyparams: parameter ", mine[i].first, " ", mine[i].second.shape(), " does not match ",
                           theirs[i].first, " ", theirs[i].second.shape()));
    }
    mine[i].second.data().assign(theirs[i].second.data());
  }
  const auto my_links = namedlinks(), their_links = source.namedlinks();
  for (size_t i = 0; i < my_links.size() && i < their_links.size(); ++i) {
    auto* target = const_cast<Link*>(my_links[i].second);
    for (auto& [name, value] : target->persistents_) {
      auto it = their_links[i].second->persistents_.find(name);
      if (it != their_links[i].second->persistents_.end()) value.assign(it->second);
    }
  }
}

void Link::replace_child(const std::string& name, std::shared_ptr<Link>) {
  throw ValueError(cat(type_name(), ": no child named '", name, "' to replace"));
}

std::shared_ptr<Link> Link::shallow_clone() const {
  throw ValueError(cat("copy: ", type_name(), " does not derive from kusari::links::Cloneable, so it cannot be copied"));
}

std::shared_ptr<Link> Link::copy() const {
  std::shared_ptr<Link> clone = shallow_clone();
  for (auto& [name, slot] : clone->params_) {
    if (!slot.variable.defined()) continue;
    Variable fresh(slot.variable.data().copy(), slot.variable.requires_grad());
    fresh.set_name(name);
    slot.variable = fresh;
  }
  structure_changed();
  for (auto& [name, value] : clone->persistents_) {
    if (value.defined()) value = value.copy();
  }
  clone->deepen_children();
  return clone;
}

void Link::to_device(const Device& device) {
  for (auto& [name, slot] : params_) {
    if (slot.variable.defined()) {
      slot.variable.set_data(slot.variable.data().to(device));
    } else {
      slot.device = device;
    }
  }
  for (auto& [name, value] : persistents_) {
    if (value.defined()) value = value.to(device);
  }
  for (const auto& [name, link] : children()) link->to_device(device);
}

}  // namespace kusari::links
