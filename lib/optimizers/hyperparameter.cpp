#include <kusari/optimizers/hyperparameter.h>

#include <set>

#include <kusari/core/error.h>

namespace kusari::optimizers {

Hyperparameter::Hyperparameter(std::shared_ptr<const Hyperparameter> parent) : parent_(std::move(parent)) {}

const double* Hyperparameter::find(std::string_view name) const {
  for (const auto& [key, value] : values_) {
    if (key.size() == name.size() && key == name) return &value;
  }
  return nullptr;
}

void Hyperparameter::define(const std::string& name, double value) {
  if (contains(name)) throw ValueError(cat("Hyperparameter: '", name, "' is already defined"));
  values_.emplace_back(name, value);
}

void Hyperparameter::set(const std::string& name, double value) {
  if (!contains(name)) throw_unknown(name);
  for (auto& [key, own] : values_) {
    if (key == name) {
      own = value;
      return;
    }
  }
  values_.emplace_back(name, value);
}

double Hyperparameter::get(std::string_view name) const {
  for (const Hyperparameter* level = this; level; level = level->parent_.get()) {
    if (const double* value = level->find(name)) return *value;
  }
  throw_unknown(name);
}

bool Hyperparameter::contains(const std::string& name) const {
  return find(name) || (parent_ && parent_->contains(name));
}

bool Hyperparameter::overrides(const std::string& name) const { return find(name) != nullptr; }

void Hyperparameter::reset(const std::string& name) {
  if (!find(name) || !parent_ || !parent_->contains(name)) {
    throw ValueError(cat("Hyperparameter: '", name, "' is not an override of an inherited value"));
  }
  std::erase_if(values_, [&](const auto& entry) { return entry.first == name; });
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
