#pragma once
// Communicator::Impl: the MPI state behind a Communicator. Internal header (includes <mpi.h>).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kusari/distributed/detail/allreduce_algorithm.h>
#include <kusari/distributed/detail/comm_groups.h>
#include <kusari/distributed/detail/group_allreduce.h>
#include <kusari/distributed/communicator.h>
#include <kusari/distributed/detail/stall_inspector.h>
#include <kusari/distributed/detail/wire_scaling.h>

namespace kusari::distributed {

// A communicator's NCCL groups for the GPU its ranks' arrays are on: those its algorithm's composition
// sums over (detail/group_allreduce.h). They queue on the device's one communication stream (colors
// launched at once each on a stream of its own, joined back before the next collective), so two
// communicators must not run device collectives from two threads at once (their order could differ
// between ranks); the multi-node optimizer's own communicator runs them only on its thread.
struct NcclGroups {
  Device device;           // the GPU the groups serve (or the loopback device standing in)
  AllreduceGroups groups;  // NCCL groups (NcclCollectiveGroup; StagedCollectiveGroup for loopback)
};

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
  std::unique_ptr<NcclGroups> nccl;  // made by the path's first collective (nccl_fused_allreduce)

  // The stall inspector's record of a collective of this communicator, named `op`.
  CollectiveScope scope(const char* op) { return CollectiveScope(channel, op); }
};

// fused_allreduce (the communicator's sum of `arrays`, scaled by `scaling` or else averaged under its
// options' policy; `op` names the caller) through NCCL when every rank's arrays are on one GPU; returns
// false, having summed nothing, when they are not or the build has no NCCL (in a build with NCCL every
// rank agrees on which, in one MPI collective). With KUSARI_LOOPBACK_NCCL=1 loopback arrays take the
// path too, MPI groups on host copies standing in for NCCL (the suite's way to run it without a GPU).
// The first call on a GPU makes the NCCL groups: ValueError on every rank if ranks of a node share a GPU.
bool nccl_fused_allreduce(Communicator::Impl& impl, const std::vector<Array>& arrays,
                          std::optional<WireScaling> scaling, const char* op);

// Communicator::allreduce, comparing the element count and dtype across ranks first (one allgather)
// only when compare_layout is set: callers that agreed on them once (multi-node batch normalization)
// make one collective per call.
Array reduce_across_ranks(Communicator::Impl& impl, const Array& array, ReduceOp op, bool compare_layout);

}  // namespace kusari::distributed
