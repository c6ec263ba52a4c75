#include <kusari/core/allocator.h>

#include <array>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include <kusari/core/error.h>
#include <kusari/core/object_pool.h>

namespace kusari {
namespace {

// Host allocator that keeps freed blocks in per-size free lists, so a training loop whose step
// allocates the same sizes each time stops calling the system allocator after the first step. Sizes
// round to a few classes per power of two, and each class's list sits at an index computed from the
// size, so a pooled allocation is a short locked pop.
class PooledHostAllocator final : public Allocator {
 public:
  void* allocate(const Device&, size_t nbytes) override {
    const SizeClass size_class = classify(nbytes);
    const auto size = static_cast<int64_t>(size_class.bytes);
    {
      std::lock_guard lock(mutex_);
      stats_.bytes_in_use += size;
      std::vector<void*>& blocks = free_[size_class.index];
      if (!blocks.empty()) {
        void* p = blocks.back();
        blocks.pop_back();
        stats_.bytes_cached -= size;
        ++stats_.pooled_allocations;
        return p;
      }
      ++stats_.fresh_allocations;
    }
    void* block = std::aligned_alloc(64, size_class.bytes);
    if (!block) {
      std::lock_guard lock(mutex_);
      stats_.bytes_in_use -= size;
      --stats_.fresh_allocations;
      throw std::bad_alloc();
    }
    return block;
  }

  void deallocate(const Device&, void* p, size_t nbytes) override {
    const SizeClass size_class = classify(nbytes);
    const auto size = static_cast<int64_t>(size_class.bytes);
    std::lock_guard lock(mutex_);
    free_[size_class.index].push_back(p);
    stats_.bytes_in_use -= size;
    stats_.bytes_cached += size;
  }

  void release_cached() override {
    std::lock_guard lock(mutex_);
    for (std::vector<void*>& blocks : free_) {
      for (void* p : blocks) std::free(p);
      blocks = {};
    }
    stats_.bytes_cached = 0;
  }

  AllocatorStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  // A request's rounded size and the index of that size's free list.
  struct SizeClass {
    size_t bytes;
    size_t index;
  };
  // Up to 512 bytes: multiples of 64 (indexes 0-7). Above: multiples of 1/8 of the next power of two,
  // which leaves four sizes per power (5/8 to 8/8 of it) and bounds the waste at 12.5%.
  static SizeClass classify(size_t n) {
    if (n <= 512) {
      const size_t units = n == 0 ? 1 : (n + 63) / 64;
      return {units * 64, units - 1};
    }
    const int exponent = std::bit_width(n - 1);  // the power of two is 2^exponent >= n, exponent >= 10
    const size_t step = size_t{1} << (exponent - 3);
    const size_t multiple = (n + step - 1) / step;  // 5 to 8
    return {multiple * step, 8 + static_cast<size_t>(exponent - 10) * 4 + (multiple - 5)};
  }
  static constexpr size_t kClasses = 8 + (64 - 10 + 1) * 4;

  mutable std::mutex mutex_;
  std::array<std::vector<void*>, kClasses> free_;
  AllocatorStats stats_;
};

std::array<Allocator*, kDeviceTypeCount>& allocators() {
  // Never destroyed: arrays in static storage may be freed after main returns.
  static auto* host = new PooledHostAllocator();
  static std::array<Allocator*, kDeviceTypeCount> table{host, nullptr};
  return table;
}

}  // namespace

Allocator& allocator_for(DeviceType type) {
  Allocator* a = allocators()[static_cast<size_t>(type)];
  if (!a) throw DeviceError(cat("allocate: no allocator is registered for device type ", static_cast<int>(type),
                                " (was kusari built with that backend?)"));
  return *a;
}

void register_allocator(DeviceType type, Allocator* allocator) { allocators()[static_cast<size_t>(type)] = allocator; }

std::shared_ptr<Storage> allocate_storage(const Device& device, size_t nbytes) {
  Allocator& allocator = allocator_for(device.type);
  auto storage = std::allocate_shared<Storage>(PoolAllocator<Storage>());
  storage->data = allocator.allocate(device, nbytes);
  storage->nbytes = nbytes;
  storage->device = device;
  storage->allocator = &allocator;
  return storage;
}

Storage::~Storage() {
  if (allocator) allocator->deallocate(device, data, nbytes);
}

}  // namespace kusari
