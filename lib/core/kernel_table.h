#pragma once
// The dispatch seam between device-independent code and device kernels: one table per operation,
// indexed by device type, filled by each backend on the first dispatch (lib/kernels/cpu, loopback,
// later cuda). The operations' contracts are in kusari/kernels/ops/, by area; only the routines of
// lib/kernels (and the array's own copies in lib/core) dispatch through here.

#include <array>
#include <atomic>
#include <mutex>
#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

// Installs the kernels of every backend built into the library (the CPU's and loopback's), once; kernel_for calls it
// when it first finds an entry empty, so no static initializer has to survive a static link.
KUSARI_API void register_builtin_backends();

// The table of one operation's kernels, one per device type, with the backend that registered each.
template <class Op>
struct KUSARI_API KernelTable {
  static inline std::array<std::atomic<typename Op::Fn*>, kDeviceTypeCount> entries{};
  static inline std::array<const char*, kDeviceTypeCount> backends{};
};

// Serializes every change to the kernel tables.
KUSARI_API std::mutex& kernel_registration_mutex();

// Installs `fn`, from the backend named `backend`, as Op's kernel for `type`; a second kernel for the
// same operation and device type throws ValueError naming both backends. Backends built into the
// library call this from register_builtin_backends.
template <class Op>
void install_kernel(DeviceType type, const char* backend, typename Op::Fn* fn) {
  const auto slot = static_cast<size_t>(type);
  std::lock_guard<std::mutex> lock(kernel_registration_mutex());
  if (KernelTable<Op>::entries[slot].load(std::memory_order_acquire)) {
    throw ValueError(cat(Op::name, ": backend '", backend, "' registers a kernel for ", Device{type, 0},
                         " devices, which backend '", KernelTable<Op>::backends[slot], "' already registered"));
  }
  KernelTable<Op>::backends[slot] = backend;
  KernelTable<Op>::entries[slot].store(fn, std::memory_order_release);
}

// Registers another backend's kernel: the built-in backends are installed first, so a kernel for an
// operation and device type they already cover is refused here, at the caller's registration.
template <class Op>
void register_kernel(DeviceType type, const char* backend, typename Op::Fn* fn) {
  register_builtin_backends();
  install_kernel<Op>(type, backend, fn);
}

// Op's kernel for `device`; throws DeviceError when that backend has none.
template <class Op>
typename Op::Fn* kernel_for(const Device& device) {
  auto& entry = KernelTable<Op>::entries[static_cast<size_t>(device.type)];
  // Relaxed: an entry publishes only a function's address, and this load is on every operation's path.
  auto* fn = entry.load(std::memory_order_relaxed);
  if (!fn) [[unlikely]] {
    register_builtin_backends();
    fn = entry.load(std::memory_order_acquire);
  }
  if (!fn) throw DeviceError(cat(Op::name, ": no kernel is registered for device ", device));
  return fn;
}

}  // namespace kusari
