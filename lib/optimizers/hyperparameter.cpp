#include <kusari/optimizers/hyperparameter.h>

#include <set>

#include <kusari/core/error.h>

namespace kusari::optimizers {

Hyperparameter::Hyperparameter(std::shared_ptr<const Hyperparameter> parent) : parent_(std::move(parent)) {}

void Hyperparameter::define(const std::string& name, double value) {
  if (contains(name)) throw ValueError(cat("Hyperparameter: '", name, "' is already defined"));
  values_[name] = value;
}

void Hyperparameter::set(const std::string& name, double value) {
  if (!contains(name)) throw_unknown(name);
  values_[name] = value;
}

double Hyperparameter::get(std::string_view name) const {
  for (const Hyperparameter* level = this; level; level = level->parent_.get()) {
    auto it = level->values_.find(name);
    if (it != level->values_.end()) return it->second;
  }
  throw_unknown(name);
}

bool Hyperparameter::contains(const std::string& name) const {
  return values_.contains(name) || (parent_ && parent_->contains(name));
}

bool Hyperparameter::overrides(const std::string& name) const { return values_.contains(name); }

void Hyperparameter::reset(const std::string& name) {
  if (!values_.contains(name) || !parent_ || !parent_->contains(name)) {
    throw ValueError(cat("Hyperparameter: '", name, "' is not an override of an inherited value"));
  }
  values_.erase(name);
}

std::vector<std::string> Hyperparameter::names() const {
  std::set<std::string> all;
  for (const Hyperparameter* level = this; level; level = level->parent_.get()) {
    for (const auto& [name, value] : level->values_) all.insert(name);
  }
  return {all.begin(), all.end()};
}

void Hyperparameter::throw_unknown(std::string_view name) const {
  std::string known;
  for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw ValueError(cat("Hyperparameter: unknown name '", name, "'; expected one of: ", known));
}

}  // namespace kusari::optimizers
