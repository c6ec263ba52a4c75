// The CUDA runtime calls the backend makes, on the host, linked in place of libcudart by the host
// emulation (meson option cuda-emulation): one device of kEmulatedBytes (whatever the host has) whose
// memory is the host's, work done when it is queued (every stream and event is complete at once), events
// that keep the host's clock.

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include <kusari/kernels/cuda/detail/emulated_threads.h>

namespace {

// The emulated device's memory.
constexpr size_t kEmulatedBytes = size_t{16} << 30;
// cudaMalloc's alignment.
constexpr size_t kAlignment = 256;

thread_local cudaError_t last_error = cudaSuccess;
thread_local int current_device = 0;

// Device and pinned host allocations, and the bytes the device's hold.
struct DeviceMemory {
  std::mutex mutex;
  std::unordered_map<void*, size_t> sizes;
  std::unordered_set<void*> pinned;
  size_t in_use = 0;
};

DeviceMemory& device_memory() {
  static DeviceMemory memory;
  return memory;
}

// An event: when it was last recorded, on the host's clock, unless made without timing.
struct EmulatedEvent {
  bool timing = true;
  std::chrono::steady_clock::time_point recorded;
  bool ever_recorded = false;
};

// A stream: only its existence (work runs when queued).
struct EmulatedStream {
  int device = 0;
};

// Returns `error`, also as the thread's last error, as the runtime does.
cudaError_t fail(cudaError_t error) {
  last_error = error;
  return error;
}

// `bytes` of host memory at the alignment (exactly as many, so that a sanitizer sees their end), or nullptr.
void* aligned(size_t bytes) {
  void* p = nullptr;
  return posix_memalign(&p, kAlignment, bytes) == 0 ? p : nullptr;
}

}  // namespace

namespace kusari::kernels::cuda::emulation {

void set_last_error(cudaError_t error) { last_error = error; }

}  // namespace kusari::kernels::cuda::emulation

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

cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

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
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  if (bytes > kEmulatedBytes - memory.in_use) return fail(cudaErrorMemoryAllocation);
  *pointer = aligned(bytes);
  if (*pointer == nullptr) return fail(cudaErrorMemoryAllocation);
  memory.sizes[*pointer] = bytes;
  memory.in_use += bytes;
  return cudaSuccess;
}

cudaError_t cudaFree(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  const auto found = memory.sizes.find(pointer);
  if (found == memory.sizes.end()) return fail(cudaErrorInvalidValue);
  memory.in_use -= found->second;
  memory.sizes.erase(found);
  std::free(pointer);
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** pointer, size_t bytes, unsigned int) {
  *pointer = aligned(bytes == 0 ? 1 : bytes);
  if (*pointer == nullptr) return fail(cudaErrorMemoryAllocation);
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  memory.pinned.insert(*pointer);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** pointer, size_t bytes) { return cudaHostAlloc(pointer, bytes, 0); }

cudaError_t cudaFreeHost(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  DeviceMemory& memory = device_memory();
  const std::lock_guard lock(memory.mutex);
  if (memory.pinned.erase(pointer) == 0) return fail(cudaErrorInvalidValue);
  std::free(pointer);
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned int) {
  *device = host;
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* destination, const void* source, size_t bytes, cudaMemcpyKind, cudaStream_t) {
  if (bytes > 0) std::memmove(destination, source, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyPeerAsync(void* destination, int, const void* source, int, size_t bytes, cudaStream_t) {
  if (bytes > 0) std::memmove(destination, source, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* pointer, int value, size_t bytes, cudaStream_t) {
  if (bytes > 0) std::memset(pointer, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  *stream = reinterpret_cast<cudaStream_t>(new EmulatedStream{current_device});
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t event, unsigned int) {
  return event != nullptr ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  auto* e = new EmulatedEvent;
  e->timing = (flags & cudaEventDisableTiming) == 0;
  *event = reinterpret_cast<cudaEvent_t>(e);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete reinterpret_cast<EmulatedEvent*>(event);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  if (event == nullptr) return fail(cudaErrorInvalidResourceHandle);
  auto* e = reinterpret_cast<EmulatedEvent*>(event);
  e->recorded = std::chrono::steady_clock::now();
  e->ever_recorded = true;
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  return event != nullptr ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) { return cudaEventQuery(event); }

cudaError_t cudaEventElapsedTime(float* milliseconds, cudaEvent_t start, cudaEvent_t end) {
  const auto* a = reinterpret_cast<const EmulatedEvent*>(start);
  const auto* b = reinterpret_cast<const EmulatedEvent*>(end);
  if (a == nullptr || b == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (!a->timing || !b->timing || !a->ever_recorded || !b->ever_recorded) return fail(cudaErrorInvalidResourceHandle);
  *milliseconds = std::chrono::duration<float, std::milli>(b->recorded - a->recorded).count();
  return cudaSuccess;
}
