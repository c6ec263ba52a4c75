#include <kusari/functions/broadcast.h>

#include <kusari/functions/function_helpers.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// Axes of `from` that must be summed to reach `to` (leading extra axes and stretched unit axes).
std::vector<int64_t> summed_axes(const Shape& from, const Shape& to) {
  std::vector<int64_t> axes;
  const int64_t lead = from.ndim() - to.ndim();
  for (int64_t i = 0; i < from.ndim(); ++i) {
    if (i < lead || (to[i - lead] == 1 && from[i] != 1)) axes.push_back(i);
  }
  return axes;
}

class BroadcastTo final : public FunctionNode {
 public:
  explicit BroadcastTo(Shape shape) : shape_(std::move(shape)) {}
  std::string label() const override { return "BroadcastTo"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {x[0].broadcast_to(shape_)}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {sum_to(gy[0], inputs()[0]->shape)};
  }

 private:
  Shape shape_;
};

class SumTo final : public FunctionNode {
 public:
  explicit SumTo(Shape shape) : shape_(std::move(shape)) {}
  std::string label() const override { return "SumTo"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    const std::vector<int64_t> axes = summed_axes(x[0].shape(), shape_);
    if (axes.empty()) return {x[0].reshape(shape_)};
    return {ops::sum(x[0], axes, true).reshape(shape_)};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {broadcast_to(gy[0], inputs()[0]->shape)};
  }

 private:
  Shape shape_;
};

}  // namespace

Variable broadcast_to(const Variable& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  if (broadcast_shapes(x.shape(), shape, "broadcast_to") != shape) {
    throw ShapeError(cat("broadcast_to: cannot broadcast shape ", x.shape(), " to ", shape));
  }
  return apply_single<BroadcastTo>({x}, shape);
}

Variable sum_to(const Variable& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  if (broadcast_shapes(x.shape(), shape, "sum_to") != x.shape()) {
    throw ShapeError(cat("sum_to: expected a shape that broadcasts to ", x.shape(), ", got ", shape));
  }
  return apply_single<SumTo>({x}, shape);
}

}  // namespace kusari::functions
