// hybrid (Jia et al. 2018): the ring for large buffers (bandwidth-bound), hierarchical for small ones
// (latency-bound), switching at hybrid_threshold_bytes of wire data.

#include <kusari/distributed/detail/allreduce_algorithm.h>

namespace kusari::distributed {
namespace {

class HybridAllreduce : public AllreduceAlgorithm {
 public:
  explicit HybridAllreduce(const CommunicatorOptions& options)
      : threshold_bytes_(options.hybrid_threshold_bytes),
        ring_(make_ring_allreduce(options)),
        hierarchical_(make_hierarchical_allreduce(options)) {}

  void run(ReduceBuffer& buffer, const CommGroups& groups) const override {
    const bool large = static_cast<int64_t>(buffer.wire_bytes(buffer.size())) >= threshold_bytes_;
    (large ? ring_ : hierarchical_)->run(buffer, groups);
  }

 private:
  int64_t threshold_bytes_;
  std::unique_ptr<AllreduceAlgorithm> ring_;
  std::unique_ptr<AllreduceAlgorithm> hierarchical_;
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_hybrid_allreduce(const CommunicatorOptions& options) {
  return std::make_unique<HybridAllreduce>(options);
}

}  // namespace kusari::distributed
