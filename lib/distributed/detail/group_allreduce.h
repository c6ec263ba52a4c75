#pragma once
// Internal to the library: the papers' all-reduces composed of group collectives
// (detail/collective_group.h), written once: which groups each algorithm sums over, and which
// reduce-scatters, all-gathers, reduces, broadcasts and all-reduces run on them, with what padding and
// shares. NCCL groups run it on GPUs; MPI groups run the same composition on CPUs, where it is tested.

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <kusari/distributed/communicator_options.h>
#include <kusari/distributed/detail/collective_group.h>
#include <kusari/distributed/detail/comm_groups.h>
#include <kusari/distributed/detail/nccl_pattern.h>

namespace kusari::distributed {

// The groups an algorithm's composition sums over; those it does not use stay empty.
struct AllreduceGroups {
  std::unique_ptr<CollectiveGroup> all;    // every rank (flat, nccl, hybrid)
  std::unique_ptr<CollectiveGroup> intra;  // this node's ranks (the two-level patterns; multi_color on nodes of several)
  std::unique_ptr<CollectiveGroup> inter;  // this intra-node rank on every node (two_dimensional; hierarchical and
                                           // hybrid on the nodes' first ranks only)
  std::vector<std::unique_ptr<CollectiveGroup>> colors;  // multi_color: one per color, in that color's ring order
};

// Makes a group over the ranks of an MPI communicator (collective over it).
using GroupMaker = std::function<std::unique_ptr<CollectiveGroup>(MPI_Comm)>;

// The groups the algorithm `name` with `options` sums over, made by make_group over comms' ranks
// (collective over comms.all(): every rank makes its groups in one order). multi_color's colors span the
// nodes (one rank of each) when every node has the same number of ranks, more than one; else every rank.
AllreduceGroups make_allreduce_groups(const std::string& name, const CommunicatorOptions& options,
                                      const CommGroups& comms, const GroupMaker& make_group);

// `array` (one dimension, contiguous) = its sum over every rank, in place, by `pattern` over `groups`
// (made for the pattern's algorithm). A failure between the stages leaves partial sums in `array`.
void allreduce_over_groups(NcclPattern pattern, const AllreduceGroups& groups, const Array& array);

// `array` = its elementwise largest over every rank, in place, through the groups `pattern` uses (a node's
// ranks first, then across the nodes).
void max_over_groups(NcclPattern pattern, const AllreduceGroups& groups, const Array& array);

}  // namespace kusari::distributed
