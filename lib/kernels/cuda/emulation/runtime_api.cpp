// The CUDA runtime calls the backend makes, on the host, linked in place of libcudart by the host
// emulation (meson option cuda-emulation): one device of kEmulatedBytes (whatever the host has) whose
// memory is the host's (each allocation followed by a guard page: guarded_memory.cpp), copies and fills
// queued on their stream as CUDA queues them (streams and events in streams.cpp): a copy from pageable
// host memory reads it at the call, one into pageable host memory returns once done, pinned memory is
// read and written when the copy runs.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <kusari/kernels/cuda/detail/emulated_memory.h>
#include <kusari/kernels/cuda/detail/emulated_streams.h>
#include <kusari/kernels/cuda/detail/emulated_threads.h>

namespace {

// The emulated device's memory.
constexpr size_t kEmulatedBytes = size_t{16} << 30;

thread_local cudaError_t last_error = cudaSuccess;
thread_local int current_device = 0;

// Device and pinned host allocations and runs of mapped memory (by their first byte), and the bytes the
// device's allocations and the driver's memory handles hold.
struct DeviceMemory {
  std::mutex mutex;
  std::map<const char*, size_t> sizes;
  std::map<const char*, size_t> pinned;
  std::map<const char*, size_t> mapped;
  size_t in_use = 0;
};

DeviceMemory& device_memory() {
  static DeviceMemory memory;
  return memory;
}

// `bytes` of pinned host memory at the alignment (exactly as many, so that a sanitizer sees their end), or
// nullptr.
void* aligned(size_t bytes) {
  void* p = nullptr;
  return posix_memalign(&p, kusari::kernels::cuda::emulation::kAllocationAlignment, bytes) == 0 ? p : nullptr;
}

// Whether `bytes` from `p` lie in one of `allocations` (each by its first byte and size).
bool within(const std::map<const char*, size_t>& allocations, const void* p, size_t bytes) {
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  const auto* at = static_cast<const char*>(p);
  auto found = allocations.upper_bound(at);
  if (found == allocations.begin()) return false;
  --found;
  return at + bytes <= found->first + found->second;
}

// Whether `bytes` from `p` lie in one pinned host allocation.
bool pinned(const void* p, size_t bytes) { return within(device_memory().pinned, p, bytes); }

// Queues a copy of `bytes` on `stream`.
void queue_copy(void* destination, const void* source, size_t bytes, cudaStream_t stream) {
  kusari::kernels::cuda::emulation::enqueue(stream, [=] { std::memmove(destination, source, bytes); });
}

}  // namespace

namespace kusari::kernels::cuda::emulation {

bool device_span(const void* data, size_t bytes) {
  return within(device_memory().sizes, data, bytes) || within(device_memory().mapped, data, bytes);
}

std::vector<std::pair<const char*, size_t>> device_allocations() {
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  std::vector<std::pair<const char*, size_t>> all(memory.sizes.begin(), memory.sizes.end());
  all.insert(all.end(), memory.mapped.begin(), memory.mapped.end());
  std::sort(all.begin(), all.end());
  return all;
}

bool claim_device_bytes(size_t bytes) {
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  if (bytes > kEmulatedBytes - memory.in_use) return false;
  memory.in_use += bytes;
  return true;
}

void return_device_bytes(size_t bytes) {
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  memory.in_use -= bytes;
}

void list_mapped(const char* data, size_t bytes) {
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  auto& runs = memory.mapped;
  const auto next = runs.find(data + bytes);
  if (next != runs.end()) {
    bytes += next->second;
    runs.erase(next);
  }
  auto before = runs.lower_bound(data);
  if (before != runs.begin() && std::prev(before)->first + std::prev(before)->second == data) {
    std::prev(before)->second += bytes;
  } else {
    runs[data] = bytes;
  }
}

void unlist_mapped(const char* data, size_t bytes) {
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  auto& runs = memory.mapped;
  auto run = runs.upper_bound(data);
  if (run == runs.begin()) return;
  --run;
  const char* first = run->first;
  const char* end = first + run->second;
  if (data + bytes > end) return;
  runs.erase(run);
  if (first < data) runs[first] = static_cast<size_t>(data - first);
  if (data + bytes < end) runs[data + bytes] = static_cast<size_t>(end - (data + bytes));
}

cudaError_t fail(cudaError_t error) {
  last_error = error;
  return error;
}

}  // namespace kusari::kernels::cuda::emulation

using kusari::kernels::cuda::emulation::fail;

cudaError_t cudaGetLastError() {
  const cudaError_t error = last_error;
  last_error = cudaSuccess;
  return error;
}

cudaError_t cudaPeekAtLastError() { return last_error; }

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    default: return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    default: return "unknown error";
  }
}

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device != 0) return fail(cudaErrorInvalidDevice);
  current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  *device = current_device;
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  *free = kEmulatedBytes - memory.in_use;
  *total = kEmulatedBytes;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** pointer, size_t bytes) {
  *pointer = nullptr;
  if (bytes == 0) return cudaSuccess;
  if (!kusari::kernels::cuda::emulation::claim_device_bytes(bytes)) return fail(cudaErrorMemoryAllocation);
  *pointer = kusari::kernels::cuda::emulation::guarded_allocate(bytes);
  if (*pointer == nullptr) {
    kusari::kernels::cuda::emulation::return_device_bytes(bytes);
    return fail(cudaErrorMemoryAllocation);
  }
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  memory.sizes[static_cast<const char*>(*pointer)] = bytes;
  return cudaSuccess;
}

// Waits for the device first, as CUDA's does: queued work may still use the memory.
cudaError_t cudaFree(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  kusari::kernels::cuda::emulation::finish_device();
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  const auto found = memory.sizes.find(static_cast<const char*>(pointer));
  if (found == memory.sizes.end()) return fail(cudaErrorInvalidValue);
  memory.in_use -= found->second;
  kusari::kernels::cuda::emulation::guarded_release(pointer, found->second);
  memory.sizes.erase(found);
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** pointer, size_t bytes, unsigned int) {
  *pointer = aligned(bytes == 0 ? 1 : bytes);
  if (*pointer == nullptr) return fail(cudaErrorMemoryAllocation);
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  memory.pinned.emplace(static_cast<const char*>(*pointer), bytes);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** pointer, size_t bytes) { return cudaHostAlloc(pointer, bytes, 0); }

// Waits for the device first, as CUDA's does.
cudaError_t cudaFreeHost(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  kusari::kernels::cuda::emulation::finish_device();
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  if (memory.pinned.erase(static_cast<const char*>(pointer)) == 0) return fail(cudaErrorInvalidValue);
  std::free(pointer);
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned int) {
  *device = host;
  return cudaSuccess;
}

// Host memory on either side is pinned (read or written when the copy runs) or pageable: CUDA reads a
// pageable source before returning and returns from a copy into pageable memory once it is done.
cudaError_t cudaMemcpyAsync(void* destination, const void* source, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  const bool from_host = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost;
  const bool to_host = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost;
  if (kind == cudaMemcpyDefault || (kind != cudaMemcpyDeviceToDevice && !from_host && !to_host)) {
    return fail(cudaErrorInvalidValue);  // the backend names every copy's direction
  }
  if (from_host && !pinned(source, bytes)) {
    auto copy = std::make_shared<std::vector<char>>(static_cast<const char*>(source),
                                                    static_cast<const char*>(source) + bytes);
    kusari::kernels::cuda::emulation::enqueue(stream, [=] { std::memcpy(destination, copy->data(), bytes); });
  } else {
    queue_copy(destination, source, bytes, stream);
  }
  if (to_host && !pinned(destination, bytes)) kusari::kernels::cuda::emulation::finish_stream(stream);
  return cudaSuccess;
}

cudaError_t cudaMemcpyPeerAsync(void* destination, int, const void* source, int, size_t bytes, cudaStream_t stream) {
  if (bytes > 0) queue_copy(destination, source, bytes, stream);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* pointer, int value, size_t bytes, cudaStream_t stream) {
  if (bytes > 0) kusari::kernels::cuda::emulation::enqueue(stream, [=] { std::memset(pointer, value, bytes); });
  return cudaSuccess;
}
