// kusari::cuda and the backend's device checks, current-device guard and streams, over the CUDA runtime.

#include <kusari/kernels/cuda/runtime.h>

#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include <kusari/core/allocator.h>
#include <kusari/kernels/cuda/detail/allocator.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/device_faults.h>
#include <kusari/kernels/cuda/detail/stream_order.h>
#include <kusari/kernels/cuda/detail/streams.h>

namespace kusari::kernels::cuda {
namespace {

// What cudaGetDeviceCount said, asked once: any error there (no driver, a driver too old, no GPU)
// means no device.
struct DeviceCensus {
  int count = 0;
  std::string reason;
};

const DeviceCensus& census() {
  // Never destroyed: the profiler's report at exit still asks for the device count.
  static const DeviceCensus* result = [] {
    auto* c_ptr = new DeviceCensus;
    DeviceCensus& c = *c_ptr;
    const cudaError_t status = cudaGetDeviceCount(&c.count);
    if (status != cudaSuccess) {
      cudaGetLastError();
      c.count = 0;
      c.reason = cat("no CUDA device: cudaGetDeviceCount says ", cudaGetErrorString(status), " (",
                     cudaGetErrorName(status), ")");
    } else if (c.count == 0) {
      c.reason = "no CUDA device: cudaGetDeviceCount found none";
    }
    return c_ptr;
  }();
  return *result;
}

// One device's streams, made on first use.
struct DeviceStreams {
  std::once_flag once;
  cudaStream_t compute = nullptr;
  cudaStream_t communication = nullptr;
  std::atomic<bool> made{false};
  std::mutex side_mutex;            // guards side
  std::vector<cudaStream_t> side;  // side_stream's, made as they are first asked for
};

// Every device's streams, whether made or not.
std::array<DeviceStreams, kMaxDevices>& all_streams() {
  static std::array<DeviceStreams, kMaxDevices> all;
  return all;
}

DeviceStreams& streams_of(int index) {
  require_device(Device::cuda(index), "CUDA stream");
  DeviceStreams& s = all_streams()[static_cast<size_t>(index)];
  std::call_once(s.once, [&] {
    DeviceGuard guard(index);
    check(cudaStreamCreateWithFlags(&s.compute, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check(cudaStreamCreateWithFlags(&s.communication, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    s.made.store(true);
  });
  return s;
}

// The devices whose work this thread queues on their communication streams (CommunicationStreamScope),
// one bit per device index.
thread_local uint64_t communicating_devices = 0;
static_assert(kMaxDevices <= 64, "one bit per device");

}  // namespace

void require_device(const Device& device, const char* what) {
  if (device.type != DeviceType::cuda) throw DeviceError(cat(what, ": expected a CUDA device, got ", device));
  const DeviceCensus& c = census();
  if (c.count == 0) throw DeviceError(cat(what, " on ", device, ": ", c.reason));
  if (device.index < 0 || device.index >= c.count || device.index >= kMaxDevices) {
    throw DeviceError(cat(what, " on ", device, ": this process sees ", c.count, " CUDA device",
                          c.count == 1 ? "" : "s", " (cuda:0 to cuda:", c.count - 1, ")"));
  }
}

DeviceGuard::DeviceGuard(int index) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != index) {
    check(cudaSetDevice(index), "cudaSetDevice");
    changed_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  if (changed_) cudaSetDevice(previous_);
}

cudaStream_t compute_stream(int index) { return streams_of(index).compute; }

bool has_streams(int index) {
  return index >= 0 && index < kMaxDevices && all_streams()[static_cast<size_t>(index)].made.load();
}

cudaStream_t communication_stream(int index) { return streams_of(index).communication; }

cudaStream_t side_stream(int index, int which) {
  DeviceStreams& s = streams_of(index);
  const std::lock_guard lock(s.side_mutex);
  while (static_cast<int>(s.side.size()) <= which) {
    const DeviceGuard guard(index);
    cudaStream_t made = nullptr;
    check(cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    s.side.push_back(made);
  }
  return s.side[static_cast<size_t>(which)];
}

cudaStream_t current_stream(int index) {
  const bool communicating = index >= 0 && index < kMaxDevices && (communicating_devices >> index & 1) != 0;
  return communicating ? communication_stream(index) : compute_stream(index);
}

CommunicationStreamScope::CommunicationStreamScope(const Device& device) : previous_(communicating_devices) {
  if (device.type == DeviceType::cuda) {
    require_device(device, "CommunicationStreamScope");
    communicating_devices |= uint64_t{1} << device.index;
  }
}

CommunicationStreamScope::~CommunicationStreamScope() { communicating_devices = previous_; }

StreamMark mark_stream(const Device& device) {
  if (device.type != DeviceType::cuda) return {};
  const cudaStream_t stream = current_stream(device.index);
  const DeviceGuard guard(device.index);
  cudaEvent_t event;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  std::shared_ptr<void> owned(event, [](void* e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); });
  check(cudaEventRecord(event, stream), "cudaEventRecord");
  return {std::move(owned)};
}

void wait_for(const Device& device, const StreamMark& mark) {
  if (device.type != DeviceType::cuda || !mark.event) return;
  check(cudaStreamWaitEvent(current_stream(device.index), static_cast<cudaEvent_t>(mark.event.get()), 0),
        "cudaStreamWaitEvent");
}

void mark_used_here(const Array& array) {
  if (!array.defined() || array.device().type != DeviceType::cuda) return;
  mark_used_on(array, current_stream(array.device().index));
}

void order_after(cudaStream_t waiting, int done_device, cudaStream_t done) {
  // An event belongs to the device current when it is made and is recorded only on that device's
  // streams; a stream of any device may wait for it.
  DeviceGuard guard(done_device);
  cudaEvent_t event;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  const cudaError_t recorded = cudaEventRecord(event, done);
  const cudaError_t waited = recorded == cudaSuccess ? cudaStreamWaitEvent(waiting, event, 0) : recorded;
  cudaEventDestroy(event);  // released once the wait has consumed it
  check(waited, recorded == cudaSuccess ? "cudaStreamWaitEvent" : "cudaEventRecord");
}

}  // namespace kusari::kernels::cuda

namespace kusari::cuda {

bool built_with_cuda() { return true; }

#if defined(KUSARI_CUDA_EMULATION)
bool emulated() { return true; }
#else
bool emulated() { return false; }
#endif

int device_count() { return kernels::cuda::census().count; }

std::string unavailable_reason() { return kernels::cuda::census().reason; }

void synchronize(int index) {
  kernels::cuda::require_device(Device::cuda(index), "cuda::synchronize");
  kernels::cuda::DeviceGuard guard(index);
  kernels::cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  kernels::cuda::raise_device_fault(index);
}

void empty_cache() { allocator_for(DeviceType::cuda).release_cached(); }

void reset_peak_memory_stats() { kernels::cuda::reset_peak_memory(); }

}  // namespace kusari::cuda
