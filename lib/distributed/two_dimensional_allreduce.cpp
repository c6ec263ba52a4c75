// two_dimensional (Mikami et al. 2018, 2D-torus): reduce-scatter inside each node, all-reduce of each
// rank's slice with the ranks holding the same slice on the other nodes, all-gather inside each node.
// All three phases are pipelined rings; only one slice ever exists in wire form.

#include <kusari/distributed/detail/allreduce_algorithm.h>
#include <kusari/distributed/detail/ring.h>

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
    reduce_within_nodes(buffer, groups, options_, [&](ReduceBuffer& slice) {
      run_rings({natural_ring(groups.inter(), 0, slice.size(), options_)}, slice);
    });
  }

 private:
  CommunicatorOptions options_;
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_two_dimensional_allreduce(const CommunicatorOptions& options) {
  return std::make_unique<TwoDimensionalAllreduce>(options);
}

}  // namespace kusari::distributed
