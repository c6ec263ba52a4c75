// ring: reduce-scatter then all-gather around all ranks, pipelined in chunks (see ring.cpp).

#include <kusari/distributed/detail/allreduce_algorithm.h>
#include <kusari/distributed/detail/ring.h>

namespace kusari::distributed {
namespace {

class RingAllreduce : public AllreduceAlgorithm {
 public:
  explicit RingAllreduce(const CommunicatorOptions& options) : options_(options) {}

  void run(ReduceBuffer& buffer, const CommGroups& groups) const override {
    run_rings({natural_ring(groups.all(), 0, buffer.size(), options_)}, buffer);
  }

 private:
  CommunicatorOptions options_;
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_ring_allreduce(const CommunicatorOptions& options) {
  return std::make_unique<RingAllreduce>(options);
}

}  // namespace kusari::distributed
