// The devices' fault records (detail/device_faults.h): one DeviceFault per device in mapped pinned host
// memory, made at first use and kept for the process's life.

#include <kusari/kernels/cuda/detail/device_faults.h>

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <mutex>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/check.h>

namespace kusari::kernels::cuda {
namespace {

// A device's record as the host and as the device address it.
struct FaultRecord {
  std::once_flag made;
  volatile DeviceFault* host = nullptr;
  DeviceFault* device = nullptr;
};

FaultRecord& record_of(int index) {
  static std::array<FaultRecord, kMaxDevices> records;
  FaultRecord& r = records.at(static_cast<size_t>(index));
  std::call_once(r.made, [&] {
    void* host = nullptr;
    check(cudaHostAlloc(&host, sizeof(DeviceFault), cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostAlloc");
    *static_cast<DeviceFault*>(host) = DeviceFault{};
    void* device = nullptr;
    check(cudaHostGetDevicePointer(&device, host, 0), "cudaHostGetDevicePointer");
    r.host = static_cast<volatile DeviceFault*>(host);
    r.device = static_cast<DeviceFault*>(device);
  });
  return r;
}

}  // namespace

DeviceFault* device_fault_record(int index) { return record_of(index).device; }

void raise_device_fault(int index) {
  volatile DeviceFault* f = record_of(index).host;
  // No kind yet: nothing recorded, or a record still being written by a kernel on another stream than
  // the one synchronized (raised at a later synchronization).
  const auto kind = static_cast<FaultKind>(f->kind);
  if (kind == FaultKind::none) return;
  std::atomic_thread_fence(std::memory_order_acquire);
  const int64_t sample = f->sample, value = f->value, bound = f->bound;
  f->kind = 0;
  std::atomic_thread_fence(std::memory_order_release);
  f->claimed = 0;
  if (kind == FaultKind::softmax_cross_entropy_label) {
    throw IndexError(cat("softmax_cross_entropy: label ", value, " of sample ", sample, " is outside [0, ", bound,
                         ") for C = ", bound, " classes (found on cuda:", index,
                         " by an earlier call, reported at this synchronization)"));
  }
  throw IndexError(cat("a kernel on cuda:", index, " recorded a fault of unknown kind ", static_cast<int>(kind)));
}

}  // namespace kusari::kernels::cuda
