#pragma once
// HookList: named callbacks run before or after an update, in registration order (shared by
// Optimizer and UpdateRule).

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/error.h>

namespace kusari::optimizers {

// When a hook runs: before the update rules (pre) or after them (post).
enum class HookTiming { pre, post };

// An ordered list of uniquely named hooks of one signature.
template <class Hook>
class KUSARI_API HookList {
 public:
  // Appends `hook`; throws ValueError naming `owner` if the name is taken.
  void add(Hook hook, const std::string& name, HookTiming timing, const char* owner) {
    if (find(name) != entries_.end()) {
      throw ValueError(cat(owner, "::add_hook: a hook named '", name, "' is already registered"));
    }
    entries_.push_back({name, std::move(hook), timing});
  }
  // Removes the hook `name`; throws ValueError naming `owner` if there is none.
  void remove(const std::string& name, const char* owner) {
    auto it = find(name);
    if (it == entries_.end()) throw ValueError(cat(owner, "::remove_hook: no hook named '", name, "'"));
    entries_.erase(it);
  }
  // Whether no hook is registered.
  bool empty() const { return entries_.empty(); }
  // Calls every hook of `timing` with `args`, in registration order.
  template <class... Args>
  void run(HookTiming timing, Args&&... args) const {
    for (const Entry& e : entries_) {
      if (e.timing == timing) e.hook(args...);
    }
  }

 private:
  struct Entry {
    std::string name;
    Hook hook;
    HookTiming timing;
  };
  typename std::vector<Entry>::iterator find(const std::string& name) {
    return std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == name; });
  }

  std::vector<Entry> entries_;
};

}  // namespace kusari::optimizers
