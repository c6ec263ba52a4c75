// two_dimensional (Mikami et al. 2018, 2D-torus): reduce-scatter inside each node, all-reduce of each
// rank's slice with the ranks holding the same slice on the other nodes, all-gather inside each node.
// All three phases are pipelined rings; only one slice ever exists in wire form.

#include <kusari/distributed/allreduce_algorithm.h>
#include <kusari/distributed/ring.h>
#include <kusari/distributed/wire_buffer.h>

namespace kusari::distributed {
namespace {

class TwoDimensionalAllreduce : public AllreduceAlgorithm {
 public:
  explicit TwoDimensionalAllreduce(const CommunicatorOptions& options) : options_(options) {}

  void check_topology(const Topology& topology) const override {
    if (!topology.homogeneous) {
      throw ValueError("two_dimensional all-reduce: expected the same number of ranks on every node");
    }
  }

  void run(ReduceBuffer& buffer, const CommGroups& groups) const override {
    RingPlan node_ring = natural_ring(groups.intra(), 0, buffer.size(), options_);
    const ElementRange slice = owned_range(node_ring);
    const Array slice_sum = scratch(buffer.wire_bytes(slice.end - slice.begin));
    node_ring.owned = slice_sum.raw_data();

    node_ring.phases = RingPhases::reduce_scatter;
    run_rings({node_ring}, buffer);
    if (groups.topology().inter_size > 1) {
      WireBuffer across(slice_sum.raw_data(), slice.end - slice.begin, buffer.wire_dtype());
      run_rings({natural_ring(groups.inter(), 0, across.size(), options_)}, across);
    }
    node_ring.phases = RingPhases::allgather;
    run_rings({node_ring}, buffer);
  }

 private:
  CommunicatorOptions options_;
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_two_dimensional_allreduce(const CommunicatorOptions& options) {
  return std::make_unique<TwoDimensionalAllreduce>(options);
}

}  // namespace kusari::distributed
