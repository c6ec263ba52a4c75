#include <kusari/functions/reshape_transpose.h>

#include <functional>

#include <kusari/functions/function_helpers.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// Any change of shape that keeps the row-major order of the elements; backward reshapes the gradient back.
class Reshape final : public FunctionNode {
 public:
  Reshape(const char* label, std::function<Array(const Array&)> view) : label_(label), view_(std::move(view)) {}
  std::string label() const override { return label_; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {view_(x[0])}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {reshape(gy[0], inputs()[0]->shape)};
  }

 private:
  const char* label_;
  std::function<Array(const Array&)> view_;
};

class Transpose final : public FunctionNode {
 public:
  explicit Transpose(std::vector<int64_t> axes) : axes_(std::move(axes)) {}
  std::string label() const override { return "Transpose"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {x[0].transpose(axes_)}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    std::vector<int64_t> inverse(axes_.size());
    for (size_t i = 0; i < axes_.size(); ++i) inverse[static_cast<size_t>(axes_[i])] = static_cast<int64_t>(i);
    return {transpose(gy[0], inverse)};
  }

 private:
  std::vector<int64_t> axes_;  // a normalised permutation
};

}  // namespace

Variable reshape(const Variable& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return apply_single<Reshape>({x}, "Reshape", [shape](const Array& a) { return a.reshape(shape); });
}

Variable flatten(const Variable& x) {
  return apply_single<Reshape>({x}, "Flatten", [](const Array& a) { return a.reshape(Shape{a.size()}); });
}

Variable squeeze(const Variable& x, const std::vector<int64_t>& axes) {
  return apply_single<Reshape>({x}, "Squeeze", [axes](const Array& a) { return a.squeeze(axes); });
}

Variable expand_dims(const Variable& x, int64_t axis) {
  return apply_single<Reshape>({x}, "ExpandDims", [axis](const Array& a) { return a.expand_dims(axis); });
}

Variable transpose(const Variable& x, const std::vector<int64_t>& axes) {
  const int64_t n = x.ndim();
  std::vector<int64_t> permutation;
  if (axes.empty()) {
    for (int64_t i = n - 1; i >= 0; --i) permutation.push_back(i);
  } else {
    if (static_cast<int64_t>(axes.size()) != n) {
      throw IndexError(cat("transpose: expected ", n, " axes for shape ", x.shape(), ", got ", axes.size()));
    }
    ops::reduction_axes(axes, n, "transpose");  // throws on an out-of-range or repeated axis
    for (int64_t a : axes) permutation.push_back(normalize_axis(a, n, "transpose"));
  }
  return apply_single<Transpose>({x}, std::move(permutation));
}

}  // namespace kusari::functions
