// naive: one MPI_Allreduce per piece (per tensor), as a plain data-parallel loop would do.

#include <algorithm>
#include <vector>

#include <kusari/distributed/detail/allreduce_algorithm.h>
#include <kusari/distributed/detail/collectives.h>

namespace kusari::distributed {
namespace {

class NaiveAllreduce : public AllreduceAlgorithm {
 public:
  void run(ReduceBuffer& buffer, const CommGroups& groups) const override {
    const std::vector<int64_t> offsets = buffer.piece_offsets();
    int64_t largest = 0;
    for (size_t i = 0; i + 1 < offsets.size(); ++i) largest = std::max(largest, offsets[i + 1] - offsets[i]);
    const Array piece = scratch(buffer.wire_bytes(largest));
    for (size_t i = 0; i + 1 < offsets.size(); ++i) {
      buffer.load(offsets[i], offsets[i + 1], piece.host_data());
      allreduce_elements(piece.host_data(), offsets[i + 1] - offsets[i], buffer.wire_dtype(), ReduceOp::sum, groups.all());
      buffer.store(offsets[i], offsets[i + 1], piece.host_data());
    }
  }
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_naive_allreduce() { return std::make_unique<NaiveAllreduce>(); }

}  // namespace kusari::distributed
