#pragma once
// Internal to the library: the collectives of detail/collective_group.h over MPI, on host arrays; the
// CPU twin of the NCCL groups, which runs the GPUs' all-reduce compositions under mpiexec.

#include <mpi.h>

#include <kusari/distributed/detail/collective_group.h>
#include <kusari/distributed/detail/comm_groups.h>
#include <kusari/distributed/reduce_op.h>

namespace kusari::distributed {

// The ranks of an MPI communicator (duplicated, collective over it) summing host arrays of float32,
// float64, float16 or bfloat16 (the half types summed in float32 and rounded, as MPI's reductions of
// them do elsewhere in the library).
class MpiCollectiveGroup : public CollectiveGroup {
 public:
  explicit MpiCollectiveGroup(MPI_Comm comm);

  void allreduce_sum(const Array& sent, const Array& received) override;
  void allreduce_max(const Array& sent, const Array& received) override;
  void reduce_sum(const Array& sent, const Array& received, int root) override;
  void broadcast(const Array& array, int root) override;
  void reduce_scatter_sum(const Array& sent, const Array& received) override;
  void allgather(const Array& sent, const Array& received) override;
  // Non-blocking all-reduces, one per group, completed together.
  void allreduce_sums_at_once(const std::vector<CollectiveGroup*>& groups, const std::vector<Array>& shares) override;
  int size() const override { return size_; }

 private:
  // received = `op` over the ranks of `sent`, in place after a copy when they differ.
  void allreduce(const Array& sent, const Array& received, ReduceOp op);

  CommHandle comm_;
  int size_ = 0;
  int rank_ = 0;
};

}  // namespace kusari::distributed
