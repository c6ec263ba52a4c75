#include <kusari/functions/get_item.h>

#include <kusari/functions/function_helpers.h>

namespace kusari::functions {
namespace {

// The adjoint of GetItem: its input placed at the indexed positions of zeros of the original shape.
class GetItemGrad final : public FunctionNode {
 public:
  GetItemGrad(std::vector<Index> index, Shape shape) : index_(std::move(index)), shape_(std::move(shape)) {}
  std::string label() const override { return "GetItemGrad"; }
  std::vector<Array> forward(const std::vector<Array>& gy) override {
    const Array gx = Array::zeros(shape_, gy[0].dtype(), gy[0].device());
    gx.get_item(index_).assign(gy[0]);  // basic indexing selects each element at most once
    return {gx};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& ggx) override {
    return {get_item(ggx[0], index_)};
  }

 private:
  std::vector<Index> index_;
  Shape shape_;
};

class GetItem final : public FunctionNode {
 public:
  explicit GetItem(std::vector<Index> index) : index_(std::move(index)) {}
  std::string label() const override { return "GetItem"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {x[0].get_item(index_)}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {apply_single<GetItemGrad>({gy[0]}, index_, inputs()[0]->shape)};
  }

 private:
  std::vector<Index> index_;
};

}  // namespace

Variable get_item(const Variable& x, const std::vector<Index>& index) { return apply_single<GetItem>({x}, index); }

}  // namespace kusari::functions
