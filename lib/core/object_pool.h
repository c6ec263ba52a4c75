#pragma once
// Thread-local free lists for the small objects every recorded operation creates and drops (graph
// nodes, variables and their bookkeeping vectors): a block freed on a thread serves that thread's next
// request of its size class, so a steady training step stops going to malloc for them.

#include <cstddef>
#include <new>
#include <vector>

#include <kusari/core/api.h>

namespace kusari {

// A block of at least `bytes` bytes, aligned for any type of alignment <= 16.
KUSARI_API void* pool_allocate(size_t bytes);
// Returns a block pool_allocate gave out for the same `bytes` (on any thread).
KUSARI_API void pool_deallocate(void* block, size_t bytes) noexcept;

// A standard allocator over the pool, for std::allocate_shared and containers.
template <class T>
struct KUSARI_API PoolAllocator {
  static_assert(alignof(T) <= 16, "PoolAllocator: blocks are aligned to 16 bytes");
  using value_type = T;

  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: rebinding is implicit for allocators

  T* allocate(size_t n) { return static_cast<T*>(pool_allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { pool_deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
};

// A vector whose buffer comes from the pool.
template <class T>
using PooledVector = std::vector<T, PoolAllocator<T>>;

}  // namespace kusari
