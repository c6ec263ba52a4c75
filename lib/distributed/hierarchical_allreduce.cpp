// hierarchical (Jia et al. 2018): reduce to each node's leader, ring all-reduce among the leaders,
// broadcast from the leader inside each node. Few ranks take part in the ring, which suits small buffers.

#include <kusari/distributed/detail/allreduce_algorithm.h>
#include <kusari/distributed/detail/ring.h>
#include <kusari/distributed/detail/wire_buffer.h>
#include <kusari/distributed/detail/collectives.h>

namespace kusari::distributed {
namespace {

class HierarchicalAllreduce : public AllreduceAlgorithm {
 public:
  explicit HierarchicalAllreduce(const CommunicatorOptions& options) : options_(options) {}

  void run(ReduceBuffer& buffer, const CommGroups& groups) const override {
    const Topology& topology = groups.topology();
    const int64_t n = buffer.size();
    if (topology.intra_size == 1) {
      // Every rank leads its own node: only the leaders' ring is left.
      run_rings({natural_ring(groups.inter(), 0, n, options_)}, buffer);
      return;
    }
    const Array node_sum = scratch(buffer.wire_bytes(n));
    buffer.load(0, n, node_sum.host_data());
    reduce_elements(node_sum.host_data(), n, buffer.wire_dtype(), ReduceOp::sum, 0, groups.intra());
    if (topology.intra_rank == 0 && topology.inter_size > 1) {
      WireBuffer leaders(node_sum.host_data(), n, buffer.wire_dtype());
      run_rings({natural_ring(groups.inter(), 0, n, options_)}, leaders);
    }
    bcast_bytes(node_sum.host_data(), node_sum.nbytes(), 0, groups.intra());
    buffer.store(0, n, node_sum.host_data());
  }

 private:
  CommunicatorOptions options_;
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_hierarchical_allreduce(const CommunicatorOptions& options) {
  return std::make_unique<HierarchicalAllreduce>(options);
}

}  // namespace kusari::distributed
