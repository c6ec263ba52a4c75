// The loopback device's allocator: host memory of its own, counted apart from the host pool's, every
// block freed at once (no cache, so a leak or a use after free shows in the counters and sanitizers)
// and handed out filled with 0xff bytes (NaN in every floating dtype), so that a routine that leaves
// its output unwritten fails the suites rather than passing on zeros.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include <kusari/core/allocator.h>
#include <kusari/kernels/loopback/detail/allocator.h>

namespace kusari::kernels::loopback {
namespace {

class LoopbackAllocator final : public Allocator {
 public:
  void* allocate(const Device&, size_t nbytes) override {
    const size_t rounded = (std::max<size_t>(nbytes, 1) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0xff, rounded);
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.bytes_in_use += static_cast<int64_t>(nbytes);
    stats_.fresh_allocations += 1;
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
    stats_.peak_bytes_held = stats_.peak_bytes_in_use;
    return p;
  }
  void deallocate(const Device&, void* data, size_t nbytes) override {
    std::free(data);
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.bytes_in_use -= static_cast<int64_t>(nbytes);
  }
  void release_cached() override {}
  AllocatorStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  mutable std::mutex mutex_;
  AllocatorStats stats_;
};

}  // namespace

Allocator& loopback_allocator() {
  static auto* allocator = new LoopbackAllocator();  // never destroyed, as the host allocator
  return *allocator;
}

}  // namespace kusari::kernels::loopback
