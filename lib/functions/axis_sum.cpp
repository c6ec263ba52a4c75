#include <kusari/functions/axis_sum.h>

#include <kusari/functions/function_helpers.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions::detail {
namespace {

class SumAxes final : public FunctionNode {
 public:
  explicit SumAxes(std::vector<int64_t> axes) : axes_(std::move(axes)) {}
  std::string label() const override { return "SumAxes"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {ops::sum(x[0], axes_)}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {broadcast_axes(gy[0], axes_, inputs()[0]->shape)};
  }

 private:
  std::vector<int64_t> axes_;
};

class BroadcastAxes final : public FunctionNode {
 public:
  BroadcastAxes(std::vector<int64_t> axes, Shape shape) : axes_(std::move(axes)), shape_(std::move(shape)) {}
  std::string label() const override { return "BroadcastAxes"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    return {x[0].reshape(ops::reduced_shape(shape_, axes_, true)).broadcast_to(shape_)};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {sum_axes(gy[0], axes_)};
  }

 private:
  std::vector<int64_t> axes_;
  Shape shape_;
};

}  // namespace

Variable sum_axes(const Variable& x, const std::vector<int64_t>& axes) { return apply_single<SumAxes>({x}, axes); }

Variable broadcast_axes(const Variable& x, const std::vector<int64_t>& axes, const Shape& shape) {
  return apply_single<BroadcastAxes>({x}, axes, shape);
}

}  // namespace kusari::functions::detail
