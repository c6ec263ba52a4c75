// naive: one MPI_Allreduce per piece (per tensor), as a plain data-parallel loop would do.

#include <vector>

#include <kusari/distributed/allreduce_algorithm.h>
#include <kusari/distributed/collectives.h>

namespace kusari::distributed {
namespace {

class NaiveAllreduce : public AllreduceAlgorithm {
 public:
  void run(ReduceBuffer& buffer, const CommGroups& groups) const override {
    const std::vector<int64_t> offsets = buffer.piece_offsets();
    std::vector<std::byte> piece;
    for (size_t i = 0; i + 1 < offsets.size(); ++i) {
      const int64_t n = offsets[i + 1] - offsets[i];
      piece.resize(buffer.wire_bytes(n));
      buffer.load(offsets[i], offsets[i + 1], piece.data());
      allreduce_elements(piece.data(), n, buffer.wire_dtype(), ReduceOp::sum, groups.all());
      buffer.store(offsets[i], offsets[i + 1], piece.data());
    }
  }
};

}  // namespace

std::unique_ptr<AllreduceAlgorithm> make_naive_allreduce() { return std::make_unique<NaiveAllreduce>(); }

}  // namespace kusari::distributed
