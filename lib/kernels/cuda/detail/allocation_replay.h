#pragma once
// Internal to the CUDA backend, and plain C++ so that it runs in every build: a workload's device-memory
// requests recorded on another device's allocator (the loopback device's, which serves the same arrays a
// GPU's step asks for), and replayed through a BlockCache over a stand-in device, to see how much memory
// the cache would hold for them against the most they need at once.

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include <kusari/core/allocator.h>

namespace kusari::kernels::cuda {

// One event of a recording: a request of `bytes` (freed < 0), or the release of request number `freed`.
struct AllocationEvent {
  size_t bytes = 0;
  int64_t freed = -1;
};

// An allocator that serves every call through `inner` and records the requests and releases in order
// (releases of blocks allocated before it was installed are passed on and not recorded).
class AllocationRecorder final : public Allocator {
 public:
  explicit AllocationRecorder(Allocator& inner) : inner_(inner) {}
  void* allocate(const Device& device, size_t nbytes) override;
  void deallocate(const Device& device, void* data, size_t nbytes) override;
  void release_cached() override { inner_.release_cached(); }
  AllocatorStats stats() const override { return inner_.stats(); }
  // The events so far.
  const std::vector<AllocationEvent>& events() const { return events_; }

 private:
  Allocator& inner_;
  std::vector<AllocationEvent> events_;
  std::map<void*, size_t> request_of_;  // each live recorded block's request number
};

// What a cache held for a replayed recording.
struct ReplayResult {
  size_t peak_requested = 0;  // the largest sum of live requests (bytes as asked)
  size_t peak_held = 0;       // the most the cache held at once (in use and cached)
  int64_t device_calls = 0;   // allocations and maps the cache asked of the device
  bool disjoint = true;       // no two live blocks overlapped
};

// Replays `events` through a fresh caching BlockCache on one stream of a device with unlimited memory,
// which maps memory into reserved addresses (the cache's expandable segments) or, with `expandable`
// false, cannot (a segment of its own for every large block).
ReplayResult replay_through_cache(const std::vector<AllocationEvent>& events, bool expandable);

}  // namespace kusari::kernels::cuda
