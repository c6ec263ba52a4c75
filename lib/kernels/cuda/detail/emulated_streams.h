#pragma once
// The CUDA backend's host emulation (meson option cuda-emulation): its streams. Work queued on a stream
// runs only when the host waits for it (a stream or event synchronization, cudaDeviceSynchronize,
// cudaFree and cudaFreeHost, a copy into pageable host memory, an NCCL collective queued on the
// stream, cuDNN's timed search), in the stream's order, and another stream's work only where a stream
// waits for one of its events; an event query runs nothing. So a missing cudaStreamWaitEvent between two
// streams, or a host read of pinned memory before the copy into it is waited for, gives wrong values on
// the host as it may on a GPU, instead of the right ones by luck of timing.

#include <cuda_runtime_api.h>

#include <functional>

namespace kusari::kernels::cuda::emulation {

// Queues `work` on `stream` (nullptr: the default stream), to run after the work queued there before it.
void enqueue(cudaStream_t stream, std::function<void()> work);

// Runs the work queued on `stream` (nullptr: the default stream) until none is left.
void finish_stream(cudaStream_t stream);

// Runs the work queued on every stream until none is left, as cudaDeviceSynchronize waits for it.
void finish_device();

}  // namespace kusari::kernels::cuda::emulation
