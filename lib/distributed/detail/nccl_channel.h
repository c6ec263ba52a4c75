#pragma once
// Internal to lib/distributed: a communicator's NCCL side for the arrays of one CUDA device, made on first
// use from its MPI communicator (rank 0's unique id broadcast over it, every rank with its own device).
// Collectives run on the device's communication stream, after the work queued on its compute stream and
// before the compute stream's later work, so the caller sees them as ordinary stream-ordered kernels.
// In a build without CUDA there is no channel (nccl_available() is false).

#include <memory>

#include <mpi.h>

#include <kusari/core/dtype.h>

namespace kusari::distributed {

// Whether this build can move CUDA arrays through NCCL.
bool nccl_available();

// One NCCL communicator over the ranks of an MPI communicator, for CUDA device `device` on this rank.
class NcclChannel {
 public:
  // Collective over comm: every rank makes its channel at the same point. Throws DeviceError with NCCL's
  // message when NCCL cannot make one (two ranks on one GPU, a rank without a device).
  NcclChannel(MPI_Comm comm, int device);
  ~NcclChannel();
  NcclChannel(const NcclChannel&) = delete;
  NcclChannel& operator=(const NcclChannel&) = delete;

  // Sums `count` elements of `dtype` (float32, float16 or bfloat16) at `buffer`, device memory of this
  // channel's device, across the ranks, in place.
  void allreduce_sum(void* buffer, int64_t count, Dtype dtype);
  // The device this channel serves.
  int device() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kusari::distributed
