#pragma once
// Internal to the CUDA backend, and plain C++ so that the host suite tests it in every build: where in
// a ring of pinned host memory each host-to-device copy queued on one stream is staged. The copies of
// one stream complete in the order they were queued, so the ring hands out its bytes in order and
// reuses the oldest first: the host waits only for the copies whose bytes a new region overwrites, and
// runs ahead of the device by up to the ring's capacity (the next step's batch staged while the device
// still computes this one's), where two fixed buffers made each copy wait for the one before it.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>

#include <kusari/kernels/cuda/detail/block_cache.h>

namespace kusari::kernels::cuda {

// The bytes of a staging ring for a copy of `bytes` on a stream whose ring has `current` bytes (0: none
// yet): room for two such copies (this one while the last is still in flight), rounded up to a multiple
// of 16 MiB, and 16 MiB more for smaller ones between them; at most 512 MiB, never less than `current`.
// Copies larger than the ring go through it in parts.
size_t staging_capacity_for(size_t bytes, size_t current);

// The regions of one stream's staging ring; not thread-safe (its user holds a lock).
class StagingRing {
 public:
  // Every region starts at a multiple of this many bytes.
  static constexpr size_t kAlignment = 256;
  // A ring of `capacity` bytes (a positive multiple of kAlignment, else ValueError).
  explicit StagingRing(size_t capacity);
  // Its bytes.
  size_t capacity() const { return capacity_; }
  // The offset of a new region of `bytes` (1 to capacity(), else ValueError): right after the last
  // region, or at 0 where it would pass the end. Each earlier region it overlaps is handed to
  // `wait` (which returns once that region's copy is done), oldest first, and forgotten.
  size_t reserve(size_t bytes, const std::function<void(EventHandle)>& wait);
  // Gives the region reserve() returned last the event recorded after its copy was queued.
  void queued(EventHandle event);
  // Forgets the oldest regions for as long as `done` says their copy is done (it takes their events
  // back), stopping at the first it does not: how a ring of many small copies keeps few events.
  void retire(const std::function<bool(EventHandle)>& done);
  // Hands every region still in flight to `wait`, oldest first, and forgets them.
  void drain(const std::function<void(EventHandle)>& wait);
  // How many regions are in flight (queued and not yet handed to a wait).
  size_t in_flight() const { return regions_.size(); }

 private:
  // A region by its positions in the sequence of every byte the ring has handed out (offset: modulo
  // the capacity).
  struct Region {
    uint64_t begin = 0, end = 0;
    EventHandle event = nullptr;
  };
  size_t capacity_;
  uint64_t head_ = 0;  // where the next region may start
  Region reserved_;    // the last region reserve() returned, until queued()
  std::deque<Region> regions_;
};

}  // namespace kusari::kernels::cuda
