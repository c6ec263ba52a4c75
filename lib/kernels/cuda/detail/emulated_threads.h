#pragma once
// The CUDA backend's host emulation (meson option cuda-emulation): a kernel's launch run on the calling
// thread, block after block, each block's threads as fibers that switch only where CUDA threads wait
// for one another (__syncthreads, a warp's shuffle), so that the kernels' indexing, barriers and
// shuffles are tested without a GPU. Threads waiting at different __syncthreads calls, a block's threads
// waiting for one another for ever, and shuffles with lanes that have returned are raised
// as DeviceError naming the block, where a GPU would hang or go on with garbage.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>

// The running thread's position and the launch's shape, as CUDA's built-in variables give them.
extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;

namespace kusari::kernels::cuda::emulation {

// Runs `thread` once for every thread of a grid × block launch on `stream`. A launch shape CUDA refuses
// sets the runtime's last error (cudaErrorInvalidConfiguration) and runs nothing, as a GPU's launch
// does; a block that deadlocks throws DeviceError.
void run_grid(dim3 grid, dim3 block, cudaStream_t stream, const std::function<void()>& thread);

// __syncthreads at file:line: returns once every thread of the block that has not returned waits there
// too; threads waiting at different calls fail the launch.
void block_barrier(const char* file, int line);

// __shfl_xor_sync's exchange: the 8 bytes `value` of lane ^ lane_mask in this thread's warp. Every lane
// of the warp must take part (member_mask naming each lane the block has); a shuffle of lanes that have
// returned or of part of a warp fails the launch.
uint64_t warp_exchange_xor(unsigned member_mask, uint64_t value, int lane_mask, int width);

// Sets the emulated runtime's last error of this thread (cudaGetLastError returns it once).
void set_last_error(cudaError_t error);

}  // namespace kusari::kernels::cuda::emulation
