#pragma once
// Internal to the CUDA backend: one device's memory mapped into reserved addresses by the driver's
// virtual memory calls (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess), reached through the
// runtime's entry points so that nothing links libcuda. The caching allocator's expandable segments
// stand on it.

#include <map>

#include <kusari/kernels/cuda/detail/block_cache.h>

namespace kusari::kernels::cuda {

// Device `index`'s mapped memory; not thread-safe (the block cache calls it under its lock).
class MappedMemory {
 public:
  explicit MappedMemory(int index) : index_(index) {}
  // Addresses for as much as the device has memory; a null base where KUSARI_CUDA_EXPANDABLE=0 turns them
  // off, or (said once on stderr) where the driver or the device cannot map memory into them.
  Reservation reserve();
  // Backs `bytes` at `at` with new device memory the device may read and write; false when it has no
  // more.
  bool map(char* at, size_t bytes);
  // Waits for the device's work, then returns the memory map(at, bytes) put there.
  void unmap(char* at, size_t bytes);

 private:
  int index_;
  std::map<char*, unsigned long long> handles_;  // each map()'s allocation handle, by address
};

}  // namespace kusari::kernels::cuda
