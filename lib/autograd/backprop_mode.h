#pragma once
// Scopes that switch graph recording off (inference, optimizer updates) or force it on.

namespace kusari {

// Restores the previous recording mode when it goes out of scope.
class BackpropModeGuard {
 public:
  // Sets the mode of this thread to `enabled` until destruction.
  explicit BackpropModeGuard(bool enabled);
  ~BackpropModeGuard();
  BackpropModeGuard(const BackpropModeGuard&) = delete;
  BackpropModeGuard& operator=(const BackpropModeGuard&) = delete;

 private:
  bool previous_;
};

// Within the returned guard's lifetime, functions record no graph: `auto guard = no_backprop_mode();`.
[[nodiscard]] BackpropModeGuard no_backprop_mode();
// Within the returned guard's lifetime, functions record the graph even inside no_backprop_mode.
[[nodiscard]] BackpropModeGuard force_backprop_mode();
// Whether functions applied on this thread record the graph now.
bool is_backprop_enabled();

}  // namespace kusari
