#pragma once
// Internal to the library: a group of ranks and the five collectives the all-reduces of CUDA arrays are
// composed of, and the largest value over it (detail/group_allreduce.h). NCCL implements them for one GPU's arrays
// (detail/nccl_collective_group.h) and MPI for host arrays (detail/mpi_collective_group.h), so the very
// composition the GPUs run also runs, and is tested against one process, under mpiexec on CPUs.

#include <vector>

#include <kusari/core/array.h>

namespace kusari::distributed {

// A group of ranks, each collective made by all of them at the same point. Arrays are contiguous, of
// one floating dtype, where the implementation keeps them; for allreduce_sum and reduce_sum, sent and
// received may be one array (in place). ShapeError for sizes that do not fit.
class CollectiveGroup {
 public:
  virtual ~CollectiveGroup() = default;

  // received = the sum over the ranks of `sent` (one size).
  virtual void allreduce_sum(const Array& sent, const Array& received) = 0;
  // received = the elementwise largest over the ranks of `sent` (one size).
  virtual void allreduce_max(const Array& sent, const Array& received) = 0;
  // received, on `root` only, = the sum over the ranks of `sent` (one size; other ranks' is left alone).
  virtual void reduce_sum(const Array& sent, const Array& received, int root) = 0;
  // `array` on every rank = root's.
  virtual void broadcast(const Array& array, int root) = 0;
  // received = this rank's slice (size/ranks elements, in rank order) of the sum over the ranks of `sent`.
  virtual void reduce_scatter_sum(const Array& sent, const Array& received) = 0;
  // received = every rank's `sent` end to end, in rank order.
  virtual void allgather(const Array& sent, const Array& received) = 0;
  // shares[i] = its sum over groups[i], in place, all at once (`groups` holds this group first, and
  // every group is of this implementation; ValueError otherwise).
  virtual void allreduce_sums_at_once(const std::vector<CollectiveGroup*>& groups,
                                      const std::vector<Array>& shares) = 0;
  // Its number of ranks.
  virtual int size() const = 0;
};

}  // namespace kusari::distributed
