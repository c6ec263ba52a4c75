// multi_color (after Kumar et al. 2017): the buffer is cut into C colors; color c is summed on its own
// ring, rotated to start at rank c·P/C and run backwards for odd c, so that every rank owns a segment of
// some color early and both directions of every link carry data. All colors run at once. When ranks
// share nodes (the same number on each), the colors run between nodes only: a reduce-scatter inside
// each node first leaves every rank one slice of the node's sum, the colored rings sum that slice with
// the ranks holding it on the other nodes, and an all-gather inside the node returns the whole buffer.

#include <kusari/distributed/detail/allreduce_algorithm.h>
#include <kusari/distributed/detail/mpi_util.h>
#include <kusari/distributed/detail/ring.h>

namespace kusari::distributed {
namespace {

class MultiColorAllreduce : public AllreduceAlgorithm {
 public:
  explicit MultiColorAllreduce(const CommunicatorOptions& options) : options_(options) {}

  void run(ReduceBuffer& buffer, const CommGroups& groups) const override {
    const Topology& topology = groups.topology();
    if (!colors_between_nodes(topology)) {
      run_colors(groups.all(), topology.size, buffer);
      return;
    }
    reduce_within_nodes(buffer, groups, options_,
                        [&](ReduceBuffer& slice) { run_colors(groups.inter(), topology.inter_size, slice); });
  }

 private:
  // Sums `buffer` over the `size` ranks of comm on options_.colors rotated rings at once.
  void run_colors(MPI_Comm comm, int size, ReduceBuffer& buffer) const {
    const int64_t n = buffer.size();
    std::vector<RingPlan> plans;
    for (int color = 0; color < options_.colors; ++color) {
      RingPlan plan = natural_ring(comm, n * color / options_.colors, n * (color + 1) / options_.colors, options_);
      plan.order = color_order(size, color, options_.colors);
      plan.tag_base = color * 2 * size;
      plans.push_back(std::move(plan));
    }
    run_rings(plans, buffer);
  }

  CommunicatorOptions options_;
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_multi_color_allreduce(const CommunicatorOptions& options) {
  return std::make_unique<MultiColorAllreduce>(options);
}

}  // namespace kusari::distributed
