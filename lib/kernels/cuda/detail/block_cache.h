#pragma once
// Internal to the CUDA backend, and plain C++ so that the host suite tests it in every build: the
// caching of one device's memory. Requests round to size classes; a freed block goes back to the free
// list of the stream it was allocated for, where the next request on that stream may take it at once
// (work on one stream runs in order, so the new owner's kernels start after the old owner's); a block
// that other streams also used waits until events recorded on them at free time have completed. When
// the device runs out, the cache waits for the blocks still gated by events, returns every free block
// and tries once more.

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <kusari/core/allocator.h>

namespace kusari::kernels::cuda {

// A stream or event of the device runtime, opaque to the cache (cudaStream_t, cudaEvent_t).
using StreamHandle = void*;
using EventHandle = void*;

// The device calls a cache makes (the CUDA runtime's, or a test's record of them).
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // bytes of new device memory, or null when the device has no more.
  virtual void* allocate(size_t bytes) = 0;
  // Returns a block allocate(bytes) gave.
  virtual void release(void* block, size_t bytes) = 0;
  // A new event marking the work queued on `stream` so far.
  virtual EventHandle record(StreamHandle stream) = 0;
  // True once the work an event marks has completed.
  virtual bool completed(EventHandle event) = 0;
  // Blocks the host until the work an event marks has completed.
  virtual void wait(EventHandle event) = 0;
  // Destroys an event.
  virtual void destroy(EventHandle event) = 0;
};

// The size a request of `bytes` is served with: multiples of 512 bytes up to 1 MiB, multiples of 2 MiB
// above (a few large classes keep a step's reused activations from fragmenting the device).
size_t block_size_for(size_t bytes);

// One device's cached blocks; thread-safe.
class BlockCache {
 public:
  // `device` names the device in error messages ("cuda:0").
  BlockCache(DeviceMemory& memory, std::string device);
  // A block of at least `bytes` for work on `stream`; throws DeviceError naming the request and the
  // cache's counters when the device is out of memory even after its free blocks are returned.
  void* take(size_t bytes, StreamHandle stream);
  // Notes that work queued on `stream` (not the block's own) reads or writes a live block, as
  // torch's record_stream: its reuse then waits for that work.
  void mark_used_on(void* block, StreamHandle stream);
  // Takes back a block that take() gave.
  void give_back(void* block);
  // Returns every free block to the device (blocks still waiting for other streams stay).
  void release_free();
  // The counters, in the host pool's terms (bytes as rounded).
  AllocatorStats stats() const;

 private:
  struct Block {
    size_t bytes = 0;
    StreamHandle stream = nullptr;
    std::vector<StreamHandle> also_used_on;
  };
  struct Waiting {
    void* block;
    size_t bytes;
    StreamHandle stream;
    std::vector<EventHandle> events;
  };
  // Moves waiting blocks whose events have all completed to the free lists.
  void collect_completed();
  // Waits for every waiting block's events and moves them all to the free lists.
  void collect_all();
  // Frees every block of the free lists.
  void release_free_locked();

  DeviceMemory& memory_;
  std::string device_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, Block> live_;
  std::map<std::pair<StreamHandle, size_t>, std::vector<void*>> free_;  // by stream, then size
  std::vector<Waiting> waiting_;
  AllocatorStats stats_;
};

}  // namespace kusari::kernels::cuda
