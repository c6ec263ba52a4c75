// A workload's device-memory requests, recorded and replayed through a block cache.

#include <kusari/kernels/cuda/detail/allocation_replay.h>

#include <algorithm>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/block_cache.h>

namespace kusari::kernels::cuda {
namespace {

// A device of unlimited memory handing out distinct addresses, segments and reservations apart as the
// device's are, reserving 1 TiB at a time with CUDA's 2 MiB granularity when `expandable`; its events
// have always completed (the replay runs on one stream).
class AddressSpace final : public DeviceMemory {
 public:
  explicit AddressSpace(bool expandable) : expandable_(expandable) {}
  void* allocate(size_t bytes) override {
    ++calls;
    return addresses(bytes);
  }
  void release(void*, size_t) override {}
  EventHandle record(StreamHandle) override { return nullptr; }
  bool completed(EventHandle) override { return true; }
  void wait(EventHandle) override {}
  void destroy(EventHandle) override {}
  Reservation reserve() override {
    constexpr size_t kReserved = size_t{1} << 40;
    if (!expandable_) return {};
    return {addresses(kReserved), kReserved, size_t{2} << 20};
  }
  bool map(char*, size_t) override {
    ++calls;
    return true;
  }
  void unmap(char*, size_t) override {}

  int64_t calls = 0;

 private:
  // `bytes` of addresses past every earlier one, a page apart from them.
  char* addresses(size_t bytes) {
    auto* first = reinterpret_cast<char*>(next_);
    next_ += bytes + 4096;
    return first;
  }

  bool expandable_;
  uintptr_t next_ = uintptr_t{1} << 20;
};

}  // namespace

void* AllocationRecorder::allocate(const Device& device, size_t nbytes) {
  void* block = inner_.allocate(device, nbytes);
  request_of_[block] = events_.size();
  events_.push_back({nbytes, -1});
  return block;
}

void AllocationRecorder::deallocate(const Device& device, void* data, size_t nbytes) {
  const auto it = request_of_.find(data);
  if (it != request_of_.end()) {
    events_.push_back({nbytes, static_cast<int64_t>(it->second)});
    request_of_.erase(it);
  }
  inner_.deallocate(device, data, nbytes);
}

ReplayResult replay_through_cache(const std::vector<AllocationEvent>& events, bool expandable) {
  AddressSpace device(expandable);
  BlockCache cache(device, "replay");
  auto* const stream = reinterpret_cast<StreamHandle>(uintptr_t{1});
  std::vector<char*> blocks(events.size(), nullptr);
  std::map<char*, size_t> live;  // each live block's requested bytes, by address
  ReplayResult result;
  size_t requested = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const AllocationEvent& e = events[i];
    if (e.freed >= 0) {
      if (static_cast<size_t>(e.freed) >= i || !blocks[static_cast<size_t>(e.freed)]) {
        throw ValueError(cat("replay_through_cache: event ", i, " releases request ", e.freed,
                             ", which is not a live earlier request"));
      }
      char*& block = blocks[static_cast<size_t>(e.freed)];
      cache.give_back(block);
      requested -= live.at(block);
      live.erase(block);
      block = nullptr;
      continue;
    }
    char* block = static_cast<char*>(cache.take(e.bytes, stream));
    const auto next = live.lower_bound(block);
    result.disjoint = result.disjoint && (next == live.end() || next->first >= block + e.bytes) &&
                      (next == live.begin() || std::prev(next)->first + std::prev(next)->second <= block);
    live[block] = e.bytes;
    blocks[i] = block;
    requested += e.bytes;
    result.peak_requested = std::max(result.peak_requested, requested);
  }
  result.peak_held = static_cast<size_t>(cache.stats().peak_bytes_held);
  result.device_calls = device.calls;
  return result;
}

}  // namespace kusari::kernels::cuda
