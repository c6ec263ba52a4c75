#pragma once
// Hyperparameter: named numbers with a parent. A per-parameter set reads its optimizer's value until
// it overrides it, so `rule.hyperparam().set("weight_decay_rate", 0)` changes one parameter only.

#include <utility>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <kusari/core/api.h>

namespace kusari::optimizers {

// A named set of doubles that falls back to its parent for names it does not set itself.
class KUSARI_API Hyperparameter {
 public:
  // A set with an optional parent (an optimizer's set has none; a rule's set has the optimizer's).
  explicit Hyperparameter(std::shared_ptr<const Hyperparameter> parent = nullptr);

  // Introduces a new name at this level with its initial value; throws ValueError if it exists.
  void define(const std::string& name, double value);
  // Sets (or overrides, when the name comes from the parent) a known name; throws ValueError otherwise.
  void set(const std::string& name, double value);
  // The value here, else the parent's; throws ValueError naming the known names if none has it.
  double get(std::string_view name) const;
  // Whether this set or an ancestor knows the name.
  bool contains(const std::string& name) const;
  // Whether this level sets the name itself (rather than inheriting it).
  bool overrides(const std::string& name) const;
  // Drops this level's own value, so the parent's shows through again; throws ValueError if the
  // name is not inherited (a defined name cannot be removed).
  void reset(const std::string& name);
  // Every known name, this level's and the ancestors', sorted.
  std::vector<std::string> names() const;
  // The parent set (null at the top).
  const std::shared_ptr<const Hyperparameter>& parent() const { return parent_; }

 private:
  [[noreturn]] void throw_unknown(std::string_view name) const;
  // This level's entry for `name`, or null.
  const double* find(std::string_view name) const;

  std::shared_ptr<const Hyperparameter> parent_;
  std::vector<std::pair<std::string, double>> values_;  // this level's own values (a handful: scanned)
};

}  // namespace kusari::optimizers
