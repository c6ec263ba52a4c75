#pragma once
// Communicator::Impl: the MPI state behind a Communicator. Internal header (includes <mpi.h>).

#include <memory>
#include <string>

#include <kusari/distributed/detail/allreduce_algorithm.h>
#include <kusari/distributed/detail/comm_groups.h>
#include <kusari/kernels/cuda/detail/nccl_group.h>
#include <kusari/distributed/communicator.h>
#include <kusari/distributed/detail/stall_inspector.h>

namespace kusari::distributed {

struct Communicator::Impl {
  // Collective over comm; comm is duplicated.
  Impl(MPI_Comm comm, std::string name, const CommunicatorOptions& options);

  std::string name;
  CommunicatorOptions options;
  std::unique_ptr<AllreduceAlgorithm> algorithm;
  CommGroups groups;
  CommHandle point_to_point;  // a duplicate of groups.all() for send and recv, apart from the collectives
  int max_tag = 0;            // MPI's tag upper bound on point_to_point
  CollectiveChannel channel;  // how the stall inspector names this communicator's collectives
  std::unique_ptr<kernels::cuda::NcclGroup> nccl;  // made by the first collective of CUDA arrays (nccl_for)

  // The stall inspector's record of a collective of this communicator, named `op`.
  CollectiveScope scope(const char* op) { return CollectiveScope(channel, op); }
};

// The NCCL group for CUDA device `device`, made on the first call (collective: every rank makes it at
// the same collective), after checking that no two ranks of a node share a GPU (ValueError on every
// rank otherwise: NCCL refuses that).
kernels::cuda::NcclGroup& nccl_for(Communicator::Impl& impl, int device);

// Communicator::allreduce, comparing the element count and dtype across ranks first (one allgather)
// only when compare_layout is set: callers that agreed on them once (multi-node batch normalization)
// make one collective per call.
Array reduce_across_ranks(Communicator::Impl& impl, const Array& array, ReduceOp op, bool compare_layout);

}  // namespace kusari::distributed
