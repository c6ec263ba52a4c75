#pragma once
// Internal to the loopback backend: its allocator.

#include <kusari/core/allocator.h>

namespace kusari::kernels::loopback {

// The one allocator of every loopback device.
Allocator& loopback_allocator();

}  // namespace kusari::kernels::loopback
