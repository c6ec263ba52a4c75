#include <kusari/distributed/sum_across_ranks.h>

#include <kusari/distributed/detail/communicator_impl.h>
#include <kusari/functions/function_helpers.h>

namespace kusari::distributed {
namespace {

class SumAcrossRanks final : public FunctionNode {
 public:
  SumAcrossRanks(Communicator comm, LayoutCheck check) : comm_(std::move(comm)), check_(check) {}
  std::string label() const override { return "SumAcrossRanks"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    const bool compare = check_ == LayoutCheck::every_call && comm_.options().check_sizes;
    return {reduce_across_ranks(comm_.impl(), x[0], ReduceOp::sum, compare)};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {sum_across_ranks(gy[0], comm_, check_)};
  }

 private:
  Communicator comm_;
  LayoutCheck check_;
};

}  // namespace

Variable sum_across_ranks(const Variable& x, const Communicator& comm, LayoutCheck check) {
  if (!x.defined()) throw ValueError("sum_across_ranks: expected a defined variable");
  return functions::apply_single<SumAcrossRanks>({x}, comm, check);
}

}  // namespace kusari::distributed
