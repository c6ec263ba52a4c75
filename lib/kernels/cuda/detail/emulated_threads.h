#pragma once
// The CUDA backend's host emulation (meson option cuda-emulation): a kernel's launch run on the thread
// that waits for its stream, block after block, each block's threads as fibers that switch only where
// CUDA threads wait for one another (__syncthreads, a warp's shuffle), so that the kernels' indexing,
// barriers and shuffles are tested without a GPU. Threads waiting at different __syncthreads calls, a
// block's threads waiting for one another for ever, and shuffles with lanes that have returned are
// raised as DeviceError naming the block, where a GPU would hang or go on with garbage; so is an access
// a GPU faults on (fault_in_kernel: the traffic hooks' misaligned access).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <source_location>
#include <string>

// The running thread's position and the launch's shape, as CUDA's built-in variables give them.
extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;

namespace kusari::kernels::cuda::emulation {

// Queues on `stream` a grid × block launch of `kernel` that runs `thread` once for every thread of it, when
// the stream's work runs (detail/emulated_streams.h; its traffic recorded under `kernel`:
// detail/emulated_traffic.h). A launch shape CUDA refuses sets the runtime's last error
// (cudaErrorInvalidConfiguration) and queues nothing, as a GPU's launch does; a launch from inside a
// kernel throws DeviceError; a block that deadlocks throws it where the host waits for the stream.
void run_grid(const void* kernel, dim3 grid, dim3 block, cudaStream_t stream, std::function<void()> thread);

// Where a kernel's source calls __syncthreads or a shuffle.
struct CallSite {
  const char* file = "";
  unsigned line = 0, column = 0;
  CallSite() = default;
  // The call at `site`.
  CallSite(const std::source_location& site) : file(site.file_name()), line(site.line()), column(site.column()) {}
  // "file:line:column".
  std::string where() const;
  // Whether both are the same call.
  bool operator==(const CallSite& other) const;
};

// __syncthreads at `site`: returns once every thread of the block that has not returned waits there too;
// threads waiting at different calls fail the launch, as does a call outside a kernel.
void block_barrier(const CallSite& site);

// __shfl_xor_sync's exchange at `site`: the 8 bytes `value` of lane ^ lane_mask in this thread's warp.
// Every lane of the warp must take part at the same call (member_mask naming each lane the block has); a
// shuffle of lanes that have returned, of part of a warp or at different calls fails the launch.
uint64_t warp_exchange_xor(unsigned member_mask, uint64_t value, int lane_mask, int width, const CallSite& site);

// Fills the `bytes` of a block-shared array at `array` with 0xff bytes the first time a thread of the
// running block declares it (KUSARI_SHARED_ARRAY), so that each block finds it as garbage.
void fresh_in_each_block(void* array, size_t bytes);

// Fails the running launch with `why` (raised as DeviceError where the host waits for its stream) when
// called from one of its threads, as a GPU fails a launch whose thread faults; nothing elsewhere (the
// host code compiled with the kernels).
void fault_in_kernel(std::string why);

// Returns `error`, also as the emulated runtime's last error of this thread (cudaGetLastError returns it
// once), as the runtime's calls do.
cudaError_t fail(cudaError_t error);

}  // namespace kusari::kernels::cuda::emulation
