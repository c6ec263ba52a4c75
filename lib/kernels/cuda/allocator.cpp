// The CUDA allocator: one BlockCache per device over cudaMalloc and cudaFree, and over the driver's
// mapping of memory into reserved addresses for its expandable segments (KUSARI_CUDA_EXPANDABLE=0 turns
// them off), each block tied to the stream the allocating thread queues on (the compute stream, or the
// communication stream inside a CommunicationStreamScope); caching unless KUSARI_CUDA_CACHE=0 (each
// array then its own cudaMalloc, freed by cudaFree, as PYTORCH_NO_CUDA_MEMORY_CACHING=1 does for running
// under compute-sanitizer).

#include <kusari/kernels/cuda/detail/allocator.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include <kusari/core/detail/environment_switch.h>
#include <kusari/kernels/cuda/detail/block_cache.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/mapped_memory.h>
#include <kusari/kernels/cuda/detail/streams.h>

namespace kusari::kernels::cuda {
namespace {

// One device's memory as the CUDA runtime gives it, and as the driver maps it into reserved addresses.
class RuntimeMemory final : public DeviceMemory {
 public:
  explicit RuntimeMemory(int index) : index_(index), mapped_(index) {}
  void* allocate(size_t bytes) override {
    DeviceGuard guard(index_);
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    check(status, "cudaMalloc");
    return p;
  }
  void release(void* block, size_t) override {
    DeviceGuard guard(index_);
    check(cudaFree(block), "cudaFree");
  }
  EventHandle record(StreamHandle stream) override {
    DeviceGuard guard(index_);
    cudaEvent_t event;
    check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    check(cudaEventRecord(event, static_cast<cudaStream_t>(stream)), "cudaEventRecord");
    return event;
  }
  bool completed(EventHandle event) override {
    const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (status == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    check(status, "cudaEventQuery");
    return true;
  }
  void wait(EventHandle event) override {
    check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
  }
  void destroy(EventHandle event) override { cudaEventDestroy(static_cast<cudaEvent_t>(event)); }
  Reservation reserve() override { return mapped_.reserve(); }
  bool map(char* at, size_t bytes) override { return mapped_.map(at, bytes); }
  void unmap(char* at, size_t bytes) override { mapped_.unmap(at, bytes); }

 private:
  int index_;
  MappedMemory mapped_;
};

// A device's memory and cache, made on its first allocation.
struct DeviceCache {
  std::once_flag once;
  std::unique_ptr<RuntimeMemory> memory;
  std::unique_ptr<BlockCache> cache;
  std::atomic<BlockCache*> ready{nullptr};  // set once cache is made, for readers outside the once-call
};

// Whether KUSARI_POISON=1 asks for every block handed out, fresh or reused, to be filled with 0xff
// bytes first (NaN in every floating dtype), so that a kernel that leaves its output unwritten fails a
// comparison instead of passing on a previous result or zeros.
bool poison_blocks() {
  static const bool on = [] {
    const char* value = std::getenv("KUSARI_POISON");
    return value && std::string(value) == "1";
  }();
  return on;
}

// KUSARI_CUDA_CACHE (1 or unset caches, 0 does not), read at the first allocation; a bad value is refused
// there, and again at the next.
bool caching_from_environment() {
  static const bool caching = kusari::detail::environment_switch("KUSARI_CUDA_CACHE", true);
  return caching;
}

class CudaAllocator final : public Allocator {
 public:
  void* allocate(const Device& device, size_t nbytes) override {
    require_device(device, "allocate");
    const cudaStream_t stream = current_stream(device.index);
    void* block = cache_of(device.index).take(nbytes, stream);
    if (poison_blocks() && nbytes > 0) {
      DeviceGuard guard(device.index);
      check(cudaMemsetAsync(block, 0xff, nbytes, stream), "cudaMemsetAsync (KUSARI_POISON)");
    }
    return block;
  }
  // Called from ~Storage, so it cannot throw: a block the device could not take back (its context lost,
  // an event not recorded) is reported and left unused.
  void deallocate(const Device& device, void* data, size_t) noexcept override {
    try {
      cache_of(device.index).give_back(data);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kusari: a block of %s was not returned to its cache: %s\n",
                   device.to_string().c_str(), e.what());
    }
  }
  void release_cached() override {
    for (DeviceCache& d : devices_) {
      if (BlockCache* cache = d.ready.load(std::memory_order_acquire)) cache->release_free();
    }
  }
  // Starts every device's peaks over.
  void reset_peaks() {
    for (DeviceCache& d : devices_) {
      if (BlockCache* cache = d.ready.load(std::memory_order_acquire)) cache->reset_peaks();
    }
  }
  // The devices' counters added up; the peaks are each device's own, so their sum bounds the peak of all.
  AllocatorStats stats() const override {
    AllocatorStats total;
    for (const DeviceCache& d : devices_) {
      const BlockCache* cache = d.ready.load(std::memory_order_acquire);
      if (!cache) continue;
      const AllocatorStats s = cache->stats();
      total.bytes_in_use += s.bytes_in_use;
      total.bytes_cached += s.bytes_cached;
      total.fresh_allocations += s.fresh_allocations;
      total.pooled_allocations += s.pooled_allocations;
      total.peak_bytes_in_use += s.peak_bytes_in_use;
      total.peak_bytes_held += s.peak_bytes_held;
    }
    return total;
  }
  BlockCache& cache_of(int index) {
    const bool caching = caching_from_environment();
    DeviceCache& d = devices_[static_cast<size_t>(index)];
    std::call_once(d.once, [&] {
      d.memory = std::make_unique<RuntimeMemory>(index);
      d.cache = std::make_unique<BlockCache>(*d.memory, Device::cuda(index).to_string(), caching);
      d.ready.store(d.cache.get(), std::memory_order_release);
    });
    return *d.cache;
  }

 private:
  std::array<DeviceCache, static_cast<size_t>(kMaxDevices)> devices_;
};

CudaAllocator& the_allocator() {
  static auto* allocator = new CudaAllocator();  // never destroyed: arrays in static storage outlive main
  return *allocator;
}

}  // namespace

Allocator& cuda_allocator() { return the_allocator(); }

void reset_peak_memory() { the_allocator().reset_peaks(); }

void mark_used_on(const Array& array, cudaStream_t stream) {
  require_device(array.device(), "mark_used_on");
  the_allocator().cache_of(array.device().index).mark_used_on(array.storage()->data, stream);
}

}  // namespace kusari::kernels::cuda
