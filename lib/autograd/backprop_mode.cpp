#include <kusari/autograd/backprop_mode.h>

namespace kusari {
namespace {
thread_local bool backprop_enabled = true;
}

BackpropModeGuard::BackpropModeGuard(bool enabled) : previous_(backprop_enabled) { backprop_enabled = enabled; }
BackpropModeGuard::~BackpropModeGuard() { backprop_enabled = previous_; }

BackpropModeGuard no_backprop_mode() { return BackpropModeGuard(false); }
BackpropModeGuard force_backprop_mode() { return BackpropModeGuard(true); }
bool is_backprop_enabled() { return backprop_enabled; }

}  // namespace kusari
