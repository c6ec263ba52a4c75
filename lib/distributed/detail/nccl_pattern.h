#pragma once
// Internal to the library: which message pattern of NCCL primitives sums a communicator's CUDA arrays,
// so that every algorithm name and option means on a GPU what it means on a CPU, or is refused.

#include <cstdint>
#include <string>

#include <kusari/distributed/communicator_options.h>

namespace kusari::distributed {

// A way of summing with NCCL groups.
enum class NcclPattern {
  all,              // NCCL's own all-reduce over every rank (its ring or tree)
  hierarchical,     // reduce to the node's first rank, all-reduce across the nodes' first ranks, broadcast
  two_dimensional,  // reduce-scatter in the node, all-reduce each slice across the nodes, all-gather in the node
};

// The pattern that sums `wire_bytes` for the algorithm `name` with `options` on CUDA arrays: flat and
// nccl take NCCL's own; hierarchical and two_dimensional theirs; hybrid NCCL's own (a ring or tree over
// every rank) from hybrid_threshold_bytes up and hierarchical below, as on a CPU. Throws ValueError for
// naive, ring and multi_color (kusari's own point-to-point engines, which move host memory) and for a
// chunk_bytes or pipeline_depth other than the default (they pace those engines; NCCL paces itself).
NcclPattern nccl_pattern(const std::string& name, const CommunicatorOptions& options, int64_t wire_bytes);

// Whether `name` may use the NCCL groups of each node and across nodes (hierarchical, two_dimensional,
// hybrid), and whether the group of every rank (flat, nccl, hybrid).
bool nccl_uses_node_groups(const std::string& name);
bool nccl_uses_world_group(const std::string& name);

}  // namespace kusari::distributed
