#pragma once
// Link: a set of named parameters and persistent values with optional child links, the building
// block of models (Chainer's Link and Chain).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/device.h>
#include <kusari/autograd/variable.h>
#include <kusari/core/serializer.h>

namespace kusari::links {

// Fills a new parameter array (see initializers.h); receives the array to fill in place.
using Initializer = std::function<void(const Array&)>;

// Base of every layer and model.
class KUSARI_API Link {
 public:
  Link() = default;
  virtual ~Link() = default;

  // Applies the link to one input; links with other signatures keep this default, which throws.
  virtual Variable forward(const Variable& x);
  // Same as forward(x).
  Variable operator()(const Variable& x) { return forward(x); }

  // Registers a parameter holding `data` (its gradient is computed by backward()).
  Variable add_param(const std::string& name, Array data);
  // Registers a parameter of `shape` filled by `init`.
  Variable add_param(const std::string& name, const Shape& shape, const Initializer& init,
                     Dtype dtype = Dtype::float32);
  // Registers a parameter whose shape is known only at the first forward (see initialize_param).
  void add_uninitialized_param(const std::string& name, Initializer init, Dtype dtype = Dtype::float32);
  // Gives an uninitialised parameter its shape and fills it with the initializer it was registered with.
  Variable initialize_param(const std::string& name, const Shape& shape);
  // Whether the parameter has data yet.
  bool is_initialized(const std::string& name) const;
  // Registers a persistent value (saved and loaded, never trained): running statistics, counters.
  void add_persistent(const std::string& name, Array value);
  // The parameter `name` of this link (not of children); throws ValueError naming the link if absent.
  Variable param(const std::string& name) const;
  // The persistent value `name` of this link; throws ValueError if absent.
  Array& persistent(const std::string& name);
  // Read-only persistent value.
  const Array& persistent(const std::string& name) const;

  // Child links by name in sorted order (empty for plain links).
  virtual std::vector<std::pair<std::string, std::shared_ptr<Link>>> children() const { return {}; }
  // Puts `link` in the place of child `name` (fields that hold the child follow); throws ValueError
  // if there is no such child or `link` cannot stand where it stood.
  virtual void replace_child(const std::string& name, std::shared_ptr<Link> link);
  // Every parameter of this link and its descendants with its path ("/conv1/W"), sorted by path;
  // uninitialised ones are skipped unless include_uninitialized.
  std::vector<std::pair<std::string, Variable>> namedparams(bool include_uninitialized = false) const;
  // The variables of namedparams(), in the same order.
  std::vector<Variable> params(bool include_uninitialized = false) const;
  // This link ("/") and every descendant with its path, sorted by path.
  std::vector<std::pair<std::string, const Link*>> namedlinks(bool skip_self = false) const;
  // Removes the gradient of every parameter.
  void cleargrads();
  // Sets every parameter's gradient to zeros.
  void zerograds();
  // Number of scalar parameters (initialised ones).
  int64_t count_params() const;
  // A number that changes whenever any link gains or initialises a parameter or gains or replaces a
  // child, so a cached parameter list (an optimizer's) knows when to rebuild.
  static uint64_t structure_version();

  // Whether the link is in training mode (batch statistics, dropout); set_train propagates to children.
  bool is_train() const { return train_; }
  // Switches this link and every descendant between training and evaluation.
  void set_train(bool train);

  // Saves or loads parameters and persistent values of this link and its children.
  virtual void serialize(Serializer& serializer);
  // Copies the parameter and persistent data of another link with the same structure into this one.
  void copyparams(const Link& source);
  // A deep copy (new parameter arrays, new children); the link's class must derive from Cloneable.
  std::shared_ptr<Link> copy() const;
  // Moves every parameter and persistent value to `device`; a parameter not yet initialised is made
  // there when it is (by its first forward or a deserializer), as Chainer's are.
  void to_device(const Device& device);

 protected:
  Link(const Link&) = default;
  Link& operator=(const Link&) = default;
  // A copy of this object sharing parameters and children (Cloneable implements it).
  virtual std::shared_ptr<Link> shallow_clone() const;
  // Replaces each child by a deep copy (Chain implements it).
  virtual void deepen_children() {}
  // A short description for messages: the class name given by the link.
  virtual std::string type_name() const { return "Link"; }
  // Moves structure_version() on; subclasses that override children() call it whenever their
  // children change.
  static void structure_changed();

 private:
  struct ParamSlot {
    Variable variable;  // undefined until initialised
    Initializer init;
    Dtype dtype = Dtype::float32;
    std::optional<Device> device;  // where to_device sent it before it was initialised (made there)
  };
  void collect_params(const std::string& prefix, bool include_uninitialized,
                      std::vector<std::pair<std::string, Variable>>& out) const;
  void collect_links(const std::string& prefix, std::vector<std::pair<std::string, const Link*>>& out) const;
  // Calls `visit` on every initialised parameter of this link and its descendants (unsorted, no paths).
  void for_each_param(const std::function<void(Variable&)>& visit);
  void require_new_name(const std::string& name) const;

  std::map<std::string, ParamSlot> params_;
  std::map<std::string, Array> persistents_;
  bool train_ = true;
};

// Gives a link class a deep copy(): derive as `class MyNet : public Cloneable<MyNet, Chain>`.
template <class Derived, class Base = Link>
class KUSARI_API Cloneable : public Base {
 public:
  using Base::Base;

 protected:
  std::shared_ptr<Link> shallow_clone() const override {
    return std::make_shared<Derived>(static_cast<const Derived&>(*this));
  }
};

}  // namespace kusari::links
