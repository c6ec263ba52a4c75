#pragma once
// AllreduceAlgorithm: one way of summing a ReduceBuffer across ranks, chosen by name. Internal header.

#include <memory>
#include <string>
#include <vector>

#include <kusari/distributed/detail/comm_groups.h>
#include <kusari/distributed/communicator_options.h>
#include <kusari/distributed/detail/reduce_buffer.h>

namespace kusari::distributed {

// Sums a buffer across every rank of a CommGroups, in place; every rank calls run with a buffer of
// the same size.
class AllreduceAlgorithm {
 public:
  virtual ~AllreduceAlgorithm() = default;
  // Throws ValueError when the algorithm cannot run on this topology.
  virtual void check_topology(const Topology&) const {}
  // Replaces every rank's contribution by the sum of all of them.
  virtual void run(ReduceBuffer& buffer, const CommGroups& groups) const = 0;
};

// The algorithm called `name` (see allreduce_algorithm_names()); throws ValueError for another name.
std::unique_ptr<AllreduceAlgorithm> make_allreduce_algorithm(const std::string& name, const CommunicatorOptions& options);

// One MPI_Allreduce per piece the caller handed in.
std::unique_ptr<AllreduceAlgorithm> make_naive_allreduce();
// One MPI_Allreduce over the fused buffer.
std::unique_ptr<AllreduceAlgorithm> make_flat_allreduce();
// A pipelined ring reduce-scatter then all-gather over point-to-point messages.
std::unique_ptr<AllreduceAlgorithm> make_ring_allreduce(const CommunicatorOptions& options);
// Reduce inside each node, ring all-reduce among node leaders, broadcast inside each node.
std::unique_ptr<AllreduceAlgorithm> make_hierarchical_allreduce(const CommunicatorOptions& options);
// Reduce-scatter inside each node, all-reduce of each slice across nodes, all-gather inside each node.
std::unique_ptr<AllreduceAlgorithm> make_two_dimensional_allreduce(const CommunicatorOptions& options);
// The buffer cut into colors, each summed on its own rotated ring, all at once.
std::unique_ptr<AllreduceAlgorithm> make_multi_color_allreduce(const CommunicatorOptions& options);
// Ring for buffers of at least hybrid_threshold_bytes on the wire, hierarchical below.
std::unique_ptr<AllreduceAlgorithm> make_hybrid_allreduce(const CommunicatorOptions& options);

}  // namespace kusari::distributed
