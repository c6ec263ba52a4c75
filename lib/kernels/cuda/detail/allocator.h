#pragma once
// Internal to the CUDA backend: its allocator (a BlockCache per device over cudaMalloc, every block
// tied to the stream it was allocated on: current_stream) and the record_stream of arrays that other
// streams use.

#include <cuda_runtime_api.h>

#include <kusari/core/allocator.h>

namespace kusari::kernels::cuda {

// The allocator registered for DeviceType::cuda.
Allocator& cuda_allocator();
// Starts every device's peak counters over from what is in use and held now.
void reset_peak_memory();
// Notes that work on `stream` uses `array`'s memory, so that its block is not reused before that work
// has finished (the NCCL communicator calls this for the buffers it queues on its stream).
void mark_used_on(const Array& array, cudaStream_t stream);

}  // namespace kusari::kernels::cuda
