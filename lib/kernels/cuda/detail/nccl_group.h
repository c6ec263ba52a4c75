#pragma once
// Internal to the library: the CUDA backend's NCCL communicator over the ranks of a job, for the arrays
// of one CUDA device on this rank; kusari::distributed's communicators make one on the first collective
// of CUDA arrays. It knows no MPI: the caller passes the broadcast that carries rank 0's unique id.
// Collectives run on the device's communication stream (those launched at once, each group on its own),
// after the work queued on the caller's stream and before that stream's later work, so the caller sees them as ordinary stream-ordered kernels
// (inside a CommunicationStreamScope the caller's stream is the communication stream itself).
// In a build without CUDA there is none (nccl_available() is false; the constructor throws).

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/kernels/cuda/detail/collective_watch.h>

namespace kusari::kernels::cuda {

// Whether this build can move CUDA arrays through NCCL.
bool nccl_available();

// One NCCL communicator of `size` ranks (this one `rank`), for CUDA device `device` of this rank.
class NcclGroup {
 public:
  // Collective: every rank makes its group at the same point; `broadcast(bytes, n)` must give every
  // rank rank 0's n bytes. Throws DeviceError on every rank when rank 0 cannot make the unique id, and
  // on a rank where NCCL cannot join (NCCL's message). Its collectives are followed on the device by a
  // CollectiveWatch with `watch` and `end_job` (a collective a rank never joins is reported, then ends
  // the job).
  NcclGroup(int rank, int size, int device, const std::function<void(void*, size_t)>& broadcast,
            const WatchSettings& watch, const std::function<void(const std::string&)>& end_job);
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  // Every collective takes contiguous float32, float16 or bfloat16 arrays of one dtype on this group's
  // device (for the all-reduces and reduce_sum, sent and received may be one array: in place); ShapeError
  // for sizes that do not fit.

  // received = the sum over the ranks of `sent` (one size).
  void allreduce_sum(const Array& sent, const Array& received);
  // received = the elementwise largest over the ranks of `sent` (one size).
  void allreduce_max(const Array& sent, const Array& received);
  // received, on `root` only, = the sum over the ranks of `sent` (one size; other ranks' `received` is
  // left alone).
  void reduce_sum(const Array& sent, const Array& received, int root);
  // `array` on every rank = root's.
  void broadcast(const Array& array, int root);
  // received = this rank's slice (size/ranks elements, in rank order) of the sum over the ranks of `sent`.
  void reduce_scatter_sum(const Array& sent, const Array& received);
  // received = every rank's `sent` end to end, in rank order.
  void allgather(const Array& sent, const Array& received);
  // shares[i] = its sum over groups[i], in place, all at once: one NCCL group call launches them, the
  // i-th on the device's i-th side stream (detail/streams.h), each waiting for the caller's stream, and
  // the caller's stream waits for them all (groups of one device; ValueError otherwise).
  static void allreduce_sums_at_once(const std::vector<NcclGroup*>& groups, const std::vector<Array>& shares);
  // The device this group serves.
  int device() const;
  // Its number of ranks.
  int size() const;

 private:
  // received = NCCL's reduction `op` (an ncclRedOp_t) over the ranks of `sent`.
  void allreduce(const Array& sent, const Array& received, int op);

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kusari::kernels::cuda
