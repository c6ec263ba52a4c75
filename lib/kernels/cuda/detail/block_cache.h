#pragma once
// Internal to the CUDA backend, and plain C++ so that the host suite tests it in every build: the
// caching of one device's memory. Requests round to size classes; a freed block goes back to the free
// list of the stream it was allocated for, where the next request on that stream may take it at once
// (work on one stream runs in order, so the new owner's kernels start after the old owner's); a block
// that other streams also used waits until events recorded on them at free time have completed. Large
// requests (above 1 MiB) take the smallest free block that holds them and split off what they leave, and
// a freed large block merges with the free blocks beside it. Where the device can map memory into
// reserved addresses, each stream's large blocks lie in one expandable segment: addresses for the whole
// device reserved once, memory mapped at their end as the stream needs more, so that every freed block
// can merge with its neighbours and a step's activations of many sizes share memory as one run (a
// ResNet-50 step's requests, replayed, are held in a few percent over their live peak, where segments
// of their own sizes held a fifth more). Elsewhere each large block's memory is a device allocation (a
// segment, a multiple of 2 MiB) of its own; a small request takes a free block of at most a quarter more
// than it asked, or else a segment of its own. When the device runs out, the cache waits for the blocks
// still gated by events, returns every wholly free segment and each mapping that a free block at the end
// of an expandable segment covers whole, and looks at its free blocks and asks the device once more.
// Without caching (KUSARI_CUDA_CACHE=0), every request is a device allocation of exactly its bytes,
// returned to the device when freed, so that a memory checker (compute-sanitizer, the host emulation's
// guard pages) sees each array's own bounds.

#include <cstddef>
#include <map>
#include <numeric>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <kusari/core/allocator.h>
#include <kusari/core/error.h>

namespace kusari::kernels::cuda {

// A stream or event of the device runtime, opaque to the cache (cudaStream_t, cudaEvent_t).
using StreamHandle = void*;
using EventHandle = void*;

// Addresses reserved on a device with no memory behind them (CUDA's cuMemAddressReserve).
struct Reservation {
  char* base = nullptr;    // the first address, or null where the device cannot map memory into addresses
  size_t bytes = 0;        // how many
  size_t granularity = 0;  // the unit of map() and unmap()
};

// The device calls a cache makes (the CUDA runtime's and driver's, or a test's record of them).
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // bytes of new device memory, or null when the device has no more.
  virtual void* allocate(size_t bytes) = 0;
  // Returns a block allocate(bytes) gave.
  virtual void release(void* block, size_t bytes) = 0;
  // As many addresses as the device has memory, reserved for one stream's expandable segment; a null
  // base where the device cannot map memory into reserved addresses.
  virtual Reservation reserve() = 0;
  // Backs `bytes` at `at` (inside a reservation, both multiples of its granularity) with new device
  // memory; false when the device has no more.
  virtual bool map(char* at, size_t bytes) = 0;
  // Returns the memory that map(at, bytes) put there, once the device's work is done with it; the
  // addresses stay reserved.
  virtual void unmap(char* at, size_t bytes) = 0;
  // A new event marking the work queued on `stream` so far.
  virtual EventHandle record(StreamHandle stream) = 0;
  // True once the work an event marks has completed.
  virtual bool completed(EventHandle event) = 0;
  // Blocks the host until the work an event marks has completed.
  virtual void wait(EventHandle event) = 0;
  // Destroys an event.
  virtual void destroy(EventHandle event) = 0;
};

// The size a request of `bytes` is served with: a multiple of 512 bytes.
size_t block_size_for(size_t bytes);
// The memory asked of the device for a new block of `block` bytes (block_size_for): the block itself up
// to 1 MiB, a multiple of 2 MiB above (its rest, when over 1 MiB, is a free block for later requests).
size_t segment_size_for(size_t block);

// One device's cached blocks; thread-safe.
class BlockCache {
 public:
  // `device` names the device in error messages ("cuda:0"); `caching` false gives every request its own
  // device allocation of exactly its bytes and returns it to the device when freed.
  BlockCache(DeviceMemory& memory, std::string device, bool caching = true);
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
  // Starts the peaks over from what is in use and held now.
  void reset_peaks();

 private:
  // Where a block is: handed out, in its stream's free list, or waiting for other streams' events.
  enum class State { live, free, waiting };
  // A block: part (or all) of the segment that starts at `segment`.
  struct Block {
    size_t bytes = 0;
    StreamHandle stream = nullptr;
    char* segment = nullptr;
    State state = State::live;
    std::vector<StreamHandle> also_used_on;
  };
  struct Waiting {
    char* block;
    std::vector<EventHandle> events;
  };
  // A stream's expandable segment: its reservation and the size of each map() call in order from its
  // base (unmapped last first, each once a free block at the end covers it whole).
  struct Expandable {
    Reservation reserved;
    std::vector<size_t> maps;
    // The first address past the mapped memory.
    char* end() const { return std::accumulate(maps.begin(), maps.end(), reserved.base); }
  };
  using Blocks = std::map<char*, Block>;
  // Puts a block that nothing uses any more into its stream's free list, merged with the free neighbours
  // of its segment; returns the free block it ended in.
  Blocks::iterator make_free(Blocks::iterator it);
  // The free block of `stream` that best serves a request of `rounded` bytes (`large` or not), or
  // blocks_.end().
  Blocks::iterator free_fit(StreamHandle stream, size_t rounded, bool large);
  // Whether `stream` has an expandable segment, reserving it at the first call (false where the device
  // cannot map memory into reserved addresses).
  bool has_expandable(StreamHandle stream);
  // A free block of at least `rounded` bytes at the end of `stream`'s expandable segment, mapped for the
  // purpose; blocks_.end() when the device has no more, or with `last_try` DeviceError naming the
  // request (`asked`).
  Blocks::iterator grow_expandable(StreamHandle stream, size_t rounded, size_t asked, bool last_try);
  // The free block that ends where `e`'s mapped memory does, or blocks_.end().
  Blocks::iterator free_end_of(const Expandable& e);
  // Unmaps the memory mapped last into each expandable segment while a free block covers it.
  void unmap_free_ends();
  // Leaves a large live block `rounded` bytes and makes its rest a free block, when the rest is large.
  void split(Blocks::iterator it, size_t rounded);
  // Takes a free block off its free list.
  void unlist(Blocks::iterator it);
  // Moves waiting blocks whose events have all completed to the free lists.
  void collect_completed();
  // Waits for every waiting block's events and moves them all to the free lists.
  void collect_all();
  // Returns every segment that is one free block, and the free ends of expandable segments, to the device.
  void release_free_locked();
  // A new free block of at least `rounded` bytes for `stream`: at the end of its expandable segment for a
  // large request where it has one, else a segment of its own; blocks_.end() when the device has no more,
  // or with `last_try` DeviceError naming the request (`asked`) and the counters.
  Blocks::iterator fresh_block(StreamHandle stream, size_t rounded, size_t asked, bool last_try);
  // A new segment holding one free block for `stream` (fresh_block's terms).
  Blocks::iterator add_segment(StreamHandle stream, size_t rounded, size_t asked, bool last_try);
  // The DeviceError of a request of `asked` bytes that found no memory for `bytes` asked of the device
  // `as` a segment, uncached, or to map.
  DeviceError out_of_memory(size_t bytes, const char* as, size_t asked) const;

  DeviceMemory& memory_;
  std::string device_;
  bool caching_;
  mutable std::mutex mutex_;
  Blocks blocks_;                                      // every block of every segment, by address
  std::map<char*, size_t> segments_;                   // each segment's bytes, by its first address
  std::map<StreamHandle, Expandable> expandable_;      // each stream's expandable segment, once reserved
  std::set<std::tuple<StreamHandle, size_t, char*>> free_;  // free blocks by stream, size, address
  std::vector<Waiting> waiting_;
  AllocatorStats stats_;
};

}  // namespace kusari::kernels::cuda
