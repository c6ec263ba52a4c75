#pragma once
// Internal to the CUDA backend: the two streams of each device (and side streams for collectives
// launched at once), created on first use and kept for the process's life. Kernels, copies, library
// calls and allocations queue on current_stream: the compute stream, or the communication stream inside a
// CommunicationStreamScope (detail/stream_order.h); the NCCL communicator runs on the communication
// stream (several groups at once on side streams), ordered after the caller's stream with events.

#include <cuda_runtime_api.h>

namespace kusari::kernels::cuda {

// The stream kernels of device `index` run on outside a CommunicationStreamScope.
cudaStream_t compute_stream(int index);
// The stream collective communication of device `index` runs on.
cudaStream_t communication_stream(int index);
// The `which`-th stream of device `index` for collectives launched at once beside each other (multi_color's
// colors), made on first use and kept for the process's life, as the others are.
cudaStream_t side_stream(int index, int which);
// The stream this thread queues device `index`'s work on: its communication stream inside a
// CommunicationStreamScope for that device, else its compute stream.
cudaStream_t current_stream(int index);
// Whether this process has queued work on device `index` (its streams exist): the devices to wait for.
bool has_streams(int index);
// Makes `waiting` (a stream of any device) wait, on the device and without blocking the host, for the
// work queued so far on `done`, a stream of device `done_device`.
void order_after(cudaStream_t waiting, int done_device, cudaStream_t done);

}  // namespace kusari::kernels::cuda
