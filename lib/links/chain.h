#pragma once
// Chain: a link with named child links; ChainList: a link with a list of children.

#include <kusari/core/api.h>
#include <kusari/links/link.h>

namespace kusari::links {

// A link whose children are registered by name.
class KUSARI_API Chain : public Link {
 public:
  Chain() = default;
  // Children in sorted name order.
  std::vector<std::pair<std::string, std::shared_ptr<Link>>> children() const override;
  // Replaces child `name`, re-pointing the field registered with it (which must be able to hold `link`).
  void replace_child(const std::string& name, std::shared_ptr<Link> link) override;
  // Registers `member` (a shared_ptr field of the subclass, already assigned) as child `name` and
  // returns it; copy() re-points the field at the copied child.
  template <class T>
  std::shared_ptr<T>& add_link(const std::string& name, std::shared_ptr<T>& member) {
    const std::ptrdiff_t offset = reinterpret_cast<char*>(&member) - reinterpret_cast<char*>(this);
    register_child(name, member, [offset, name](Chain& owner, const std::shared_ptr<Link>& child) {
      auto typed = std::dynamic_pointer_cast<T>(child);
      if (!typed) throw ValueError(cat(owner.type_name(), ": child '", name, "' cannot hold a link of another type"));
      *reinterpret_cast<std::shared_ptr<T>*>(reinterpret_cast<char*>(&owner) + offset) = std::move(typed);
    });
    return member;
  }
  // Registers a child that no field holds, passed as a temporary (reach it with child<T>(name)).
  void add_link(const std::string& name, std::shared_ptr<Link>&& link);
  // The child `name` as T; throws ValueError if absent or of another type.
  template <class T>
  std::shared_ptr<T> child(const std::string& name) const {
    auto typed = std::dynamic_pointer_cast<T>(find_child(name));
    if (!typed) throw ValueError(cat(type_name(), ": child '", name, "' is not of the requested type"));
    return typed;
  }

 protected:
  Chain(const Chain&) = default;
  void deepen_children() override;
  std::string type_name() const override { return "Chain"; }

 private:
  using Rebind = std::function<void(Chain&, const std::shared_ptr<Link>&)>;
  struct Child {
    std::shared_ptr<Link> link;
    Rebind rebind;  // re-points the subclass field in a copy (empty when no field holds it)
  };
  void register_child(const std::string& name, std::shared_ptr<Link> link, Rebind rebind);
  std::shared_ptr<Link> find_child(const std::string& name) const;

  std::map<std::string, Child> children_;
};

// A link whose children form a list, named "0", "1", ... in order.
class KUSARI_API ChainList : public Cloneable<ChainList, Link> {
 public:
  ChainList() = default;
  // Appends a child.
  void append(std::shared_ptr<Link> link);
  // Number of children.
  size_t size() const { return links_.size(); }
  // The i-th child.
  const std::shared_ptr<Link>& operator[](size_t i) const { return links_.at(i); }
  // Children as ("0", link), ("1", link), ... sorted numerically.
  std::vector<std::pair<std::string, std::shared_ptr<Link>>> children() const override;
  // Replaces child `name` ("0", "1", ...).
  void replace_child(const std::string& name, std::shared_ptr<Link> link) override;

 protected:
  void deepen_children() override;
  std::string type_name() const override { return "ChainList"; }

 private:
  std::vector<std::shared_ptr<Link>> links_;
};

}  // namespace kusari::links
