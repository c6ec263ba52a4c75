#pragma once
// Device memory allocation through a per-device-type allocator; the host one pools freed blocks.

#include <cstddef>
#include <cstdint>
#include <memory>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/core/device.h>

namespace kusari {

// Counters of one allocator, for tests and benchmarks.
struct KUSARI_API AllocatorStats {
  int64_t bytes_in_use = 0;     // held by live arrays
  int64_t bytes_cached = 0;     // freed blocks kept for reuse
  int64_t fresh_allocations = 0;  // blocks obtained from the system (not from the pool)
  int64_t pooled_allocations = 0; // requests served from the pool
  int64_t peak_bytes_in_use = 0;  // the largest bytes_in_use so far
  int64_t peak_bytes_held = 0;    // the largest bytes_in_use + bytes_cached so far
};

// Allocates raw memory on one device type.
class KUSARI_API Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns at least nbytes on `device`, 64-byte aligned.
  virtual void* allocate(const Device& device, size_t nbytes) = 0;
  // Takes back a block that allocate(device, nbytes) returned.
  virtual void deallocate(const Device& device, void* data, size_t nbytes) = 0;
  // Returns every cached block to the system.
  virtual void release_cached() = 0;
  // Current counters.
  virtual AllocatorStats stats() const = 0;
};

// The allocator registered for a device type; throws DeviceError if none is.
KUSARI_API Allocator& allocator_for(DeviceType type);
// Installs the allocator for a device type (a backend calls this once, from its registration).
KUSARI_API void register_allocator(DeviceType type, Allocator* allocator);
// A new storage of nbytes on `device` from that device's allocator.
KUSARI_API std::shared_ptr<Storage> allocate_storage(const Device& device, size_t nbytes);

}  // namespace kusari
