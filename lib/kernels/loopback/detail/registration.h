#pragma once
// The loopback backend's registration: its allocator and a kernel for every contract of
// kusari/kernels/ops/, installed by register_builtin_backends (kernels/builtin_backends.cpp) after the CPU's.

namespace kusari::kernels::loopback {

// Installs the loopback allocator and kernels (the CPU's must be installed already).
void register_loopback_backend();

}  // namespace kusari::kernels::loopback
