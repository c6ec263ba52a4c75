#include <kusari/distributed/sum_across_ranks.h>

#include <kusari/functions/function_helpers.h>

namespace kusari::distributed {
namespace {

class SumAcrossRanks final : public FunctionNode {
 public:
  explicit SumAcrossRanks(Communicator comm) : comm_(std::move(comm)) {}
  std::string label() const override { return "SumAcrossRanks"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {comm_.allreduce(x[0], ReduceOp::sum)}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {sum_across_ranks(gy[0], comm_)};
  }

 private:
  Communicator comm_;
};

}  // namespace

Variable sum_across_ranks(const Variable& x, const Communicator& comm) {
  if (!x.defined()) throw ValueError("sum_across_ranks: expected a defined variable");
  return functions::apply_single<SumAcrossRanks>({x}, comm);
}

}  // namespace kusari::distributed
