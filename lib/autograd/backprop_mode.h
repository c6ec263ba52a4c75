#pragma once
// Scopes that switch graph recording off (inference, optimizer updates) or force it on.

#include <kusari/core/api.h>

namespace kusari {

// Restores the previous recording mode when it goes out of scope.
class KUSARI_API BackpropModeGuard {
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
[[nodiscard]] KUSARI_API BackpropModeGuard no_backprop_mode();
// Within the returned guard's lifetime, functions record the graph even inside no_backprop_mode.
[[nodiscard]] KUSARI_API BackpropModeGuard force_backprop_mode();
// Whether functions applied on this thread record the graph now.
KUSARI_API bool is_backprop_enabled();

}  // namespace kusari
