#include <kusari/links/chain.h>

namespace kusari::links {

std::vector<std::pair<std::string, std::shared_ptr<Link>>> Chain::children() const {
  std::vector<std::pair<std::string, std::shared_ptr<Link>>> out;
  for (const auto& [name, child] : children_) out.emplace_back(name, child.link);
  return out;
}

void Chain::register_child(const std::string& name, std::shared_ptr<Link> link, Rebind rebind) {
  if (!link) throw ValueError(cat(type_name(), ": child '", name, "' is null"));
  if (name.empty() || name.find('/') != std::string::npos) {
    throw ValueError(cat(type_name(), ": expected a child name without '/', got '", name, "'"));
  }
  if (children_.contains(name)) throw ValueError(cat(type_name(), ": child '", name, "' is already registered"));
  children_[name] = Child{std::move(link), std::move(rebind)};
  structure_changed();
}

void Chain::add_link(const std::string& name, std::shared_ptr<Link>&& link) {
  register_child(name, std::move(link), nullptr);
}

std::shared_ptr<Link> Chain::find_child(const std::string& name) const {
  auto it = children_.find(name);
  if (it == children_.end()) throw ValueError(cat(type_name(), ": no child named '", name, "'"));
  return it->second.link;
}

void Chain::replace_child(const std::string& name, std::shared_ptr<Link> link) {
  if (!link) throw ValueError(cat(type_name(), ": the replacement of child '", name, "' is null"));
  auto it = children_.find(name);
  if (it == children_.end()) throw ValueError(cat(type_name(), ": no child named '", name, "' to replace"));
  if (it->second.rebind) it->second.rebind(*this, link);
  it->second.link = std::move(link);
  structure_changed();
}

void Chain::deepen_children() {
  for (auto& [name, child] : children_) {
    child.link = child.link->copy();
    if (child.rebind) child.rebind(*this, child.link);
  }
}

void ChainList::append(std::shared_ptr<Link> link) {
  if (!link) throw ValueError("ChainList::append: the link is null");
  links_.push_back(std::move(link));
  structure_changed();
}

std::vector<std::pair<std::string, std::shared_ptr<Link>>> ChainList::children() const {
  std::vector<std::pair<std::string, std::shared_ptr<Link>>> out;
  for (size_t i = 0; i < links_.size(); ++i) out.emplace_back(std::to_string(i), links_[i]);
  return out;
}

void ChainList::replace_child(const std::string& name, std::shared_ptr<Link> link) {
  if (!link) throw ValueError(cat(type_name(), ": the replacement of child '", name, "' is null"));
  for (size_t i = 0; i < links_.size(); ++i) {
    if (std::to_string(i) == name) {
      links_[i] = std::move(link);
      structure_changed();
      return;
    }
  }
  throw ValueError(cat(type_name(), ": no child named '", name, "' to replace"));
}

void ChainList::deepen_children() {
  for (auto& link : links_) link = link->copy();
}

}  // namespace kusari::links
