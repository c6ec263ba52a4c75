#include <kusari/core/allocator.h>

#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include <kusari/core/error.h>

namespace kusari {
namespace {

// Host allocator that keeps freed blocks in per-size free lists, so a training loop whose step
// allocates the same sizes each time stops calling the system allocator after the first step.
class PooledHostAllocator final : public Allocator {
 public:
  void* allocate(const Device&, size_t nbytes) override {
    const size_t size = round_up(nbytes);
    std::lock_guard lock(mutex_);
    stats_.bytes_in_use += static_cast<int64_t>(size);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      stats_.bytes_cached -= static_cast<int64_t>(size);
      ++stats_.pooled_allocations;
      return p;
    }
    void* block = std::aligned_alloc(64, size);
    if (!block) {
      stats_.bytes_in_use -= static_cast<int64_t>(size);
      throw std::bad_alloc();
    }
    ++stats_.fresh_allocations;
    return block;
  }

  void deallocate(const Device&, void* p, size_t nbytes) override {
    const size_t size = round_up(nbytes);
    std::lock_guard lock(mutex_);
    free_[size].push_back(p);
    stats_.bytes_in_use -= static_cast<int64_t>(size);
    stats_.bytes_cached += static_cast<int64_t>(size);
  }

  void release_cached() override {
    std::lock_guard lock(mutex_);
    for (auto& [size, blocks] : free_) {
      for (void* p : blocks) std::free(p);
    }
    free_.clear();
    stats_.bytes_cached = 0;
  }

  AllocatorStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  // Small sizes round to 64 bytes; larger ones to 1/8 of their power of two, bounding waste at 12.5%.
  static size_t round_up(size_t n) {
    if (n <= 512) return n == 0 ? 64 : (n + 63) / 64 * 64;
    size_t power = 1;
    while (power < n) power <<= 1;
    const size_t step = power / 8;
    return (n + step - 1) / step * step;
  }

  mutable std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;
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
  auto storage = std::make_shared<Storage>();
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
