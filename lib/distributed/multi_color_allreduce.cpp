// multi_color (after Kumar et al. 2017): the buffer is cut into C colors; color c is summed on its own
// ring, rotated to start at rank c·P/C and run backwards for odd c, so that every rank owns a segment of
// some color early and both directions of every link carry data. All colors run at once.

#include <kusari/distributed/allreduce_algorithm.h>
#include <kusari/distributed/mpi_util.h>
#include <kusari/distributed/ring.h>

namespace kusari::distributed {
namespace {

class MultiColorAllreduce : public AllreduceAlgorithm {
 public:
  explicit MultiColorAllreduce(const CommunicatorOptions& options) : options_(options) {}

  void run(ReduceBuffer& buffer, const CommGroups& groups) const override {
    const int size = groups.topology().size;
    const int64_t n = buffer.size();
    std::vector<RingPlan> plans;
    for (int color = 0; color < options_.colors; ++color) {
      RingPlan plan = natural_ring(groups.all(), n * color / options_.colors, n * (color + 1) / options_.colors,
                                   options_);
      plan.order = rotated_order(size, static_cast<int>(int64_t{size} * color / options_.colors), color % 2 == 1);
      plan.tag_base = color * 2 * size;
      plans.push_back(std::move(plan));
    }
    run_rings(plans, buffer);
  }

 private:
  CommunicatorOptions options_;
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_multi_color_allreduce(const CommunicatorOptions& options) {
  return std::make_unique<MultiColorAllreduce>(options);
}

}  // namespace kusari::distributed
