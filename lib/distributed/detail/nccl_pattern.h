#pragma once
// Internal to the library: which composition of group collectives (detail/group_allreduce.h) sums a
// communicator's CUDA arrays, so that every algorithm name and option means on a GPU what it means on a
// CPU, or is refused.

#include <cstdint>
#include <string>

#include <kusari/distributed/communicator_options.h>

namespace kusari::distributed {

// A way of summing with NCCL groups (or, on CPUs, their MPI twins).
enum class NcclPattern {
  all,              // NCCL's own all-reduce over every rank (its ring or tree)
  hierarchical,     // reduce to the node's first rank, all-reduce across the nodes' first ranks, broadcast
  two_dimensional,  // reduce-scatter in the node, all-reduce each slice across the nodes, all-gather in the node
  multi_color,      // the buffer cut into one share per color, each summed at once on its own rotated ring
                    // order (across the nodes, between a reduce-scatter and an all-gather in the node)
};

// The pattern that sums `wire_bytes` for the algorithm `name` with `options` on CUDA arrays: flat and
// nccl take NCCL's own; hierarchical, two_dimensional and multi_color theirs; hybrid NCCL's own (a ring
// or tree over every rank) from hybrid_threshold_bytes up and hierarchical below, as on a CPU. Throws
// ValueError for naive and ring (kusari's own point-to-point engines, which move host memory; NCCL's
// own is a ring) and for a chunk_bytes or pipeline_depth other than the default (they pace those
// engines; NCCL paces itself).
NcclPattern nccl_pattern(const std::string& name, const CommunicatorOptions& options, int64_t wire_bytes);

}  // namespace kusari::distributed
