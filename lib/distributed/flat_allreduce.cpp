// flat: the whole buffer in the wire dtype, summed by one MPI_Allreduce.

#include <vector>

#include <kusari/distributed/allreduce_algorithm.h>
#include <kusari/distributed/collectives.h>

namespace kusari::distributed {
namespace {

class FlatAllreduce : public AllreduceAlgorithm {
 public:
  void run(ReduceBuffer& buffer, const CommGroups& groups) const override {
    const int64_t n = buffer.size();
    std::vector<std::byte> fused(buffer.wire_bytes(n));
    buffer.load(0, n, fused.data());
    allreduce_elements(fused.data(), n, buffer.wire_dtype(), ReduceOp::sum, groups.all());
    buffer.store(0, n, fused.data());
  }
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_flat_allreduce() { return std::make_unique<FlatAllreduce>(); }

}  // namespace kusari::distributed
