#pragma once
// Whether a link should behave as in training (batch statistics, dropout).

#include <kusari/core/config.h>
#include <kusari/links/link.h>

namespace kusari::links {

// True when the link is in training mode (set_train) and the thread is too (config().train): either
// switch alone puts a link in evaluation mode.
inline bool in_training(const Link& link) { return link.is_train() && config().train; }

}  // namespace kusari::links
