// flat: the whole buffer in the wire dtype, summed by one MPI_Allreduce.

#include <kusari/distributed/detail/allreduce_algorithm.h>
#include <kusari/distributed/detail/collectives.h>

namespace kusari::distributed {
namespace {

class FlatAllreduce : public AllreduceAlgorithm {
 public:
  void run(ReduceBuffer& buffer, const CommGroups& groups) const override {
    const int64_t n = buffer.size();
    const Array fused = scratch(buffer.wire_bytes(n));
    buffer.load(0, n, fused.host_data());
    allreduce_elements(fused.host_data(), n, buffer.wire_dtype(), ReduceOp::sum, groups.all());
    buffer.store(0, n, fused.host_data());
  }
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_flat_allreduce() { return std::make_unique<FlatAllreduce>(); }

}  // namespace kusari::distributed
