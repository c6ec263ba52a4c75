#pragma once
// Internal to the library: the CUDA backend's NCCL communicator over the ranks of a job, for the arrays
// of one CUDA device on this rank; kusari::distributed's communicators make one on the first collective
// of CUDA arrays. It knows no MPI: the caller passes the broadcast that carries rank 0's unique id.
// Collectives run on the device's communication stream, after the work queued on its compute stream and
// before the compute stream's later work, so the caller sees them as ordinary stream-ordered kernels.
// In a build without CUDA there is none (nccl_available() is false; the constructor throws).

#include <cstddef>
#include <functional>
#include <memory>

#include <kusari/core/array.h>

namespace kusari::kernels::cuda {

// Whether this build can move CUDA arrays through NCCL.
bool nccl_available();

// One NCCL communicator of `size` ranks (this one `rank`), for CUDA device `device` of this rank.
class NcclGroup {
 public:
  // Collective: every rank makes its group at the same point; `broadcast(bytes, n)` must give every
  // rank rank 0's n bytes. Throws DeviceError on every rank when rank 0 cannot make the unique id, and
  // on a rank where NCCL cannot join (NCCL's message).
  NcclGroup(int rank, int size, int device, const std::function<void(void*, size_t)>& broadcast);
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  // received = the sum over the ranks of `sent` (contiguous float32, float16 or bfloat16 arrays of one
  // size and dtype on this group's device; distinct storage).
  void allreduce_sum(const Array& sent, const Array& received);
  // The device this group serves.
  int device() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kusari::kernels::cuda
