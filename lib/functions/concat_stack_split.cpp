#include <kusari/functions/concat_stack_split.h>

#include <kusari/functions/function_helpers.h>
#include <kusari/functions/reshape_transpose.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

class Concat final : public FunctionNode {
 public:
  explicit Concat(int64_t axis) : axis_(axis) {}
  std::string label() const override { return "Concat"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {ops::concatenate(x, axis_)}; }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    std::vector<int64_t> indices;
    int64_t end = 0;
    for (size_t i = 0; i + 1 < inputs().size(); ++i) indices.push_back(end += inputs()[i]->shape[axis_]);
    const std::vector<Variable> parts = split_axis(gy[0], indices, axis_);
    std::vector<Variable> gx;
    for (size_t i : targets) gx.push_back(parts[i]);
    return gx;
  }

 private:
  int64_t axis_;  // normalised
};

// Outputs are views of consecutive ranges [bounds[k], bounds[k + 1]) of the input along the axis.
class SplitAxis final : public FunctionNode {
 public:
  SplitAxis(int64_t axis, std::vector<int64_t> bounds) : axis_(axis), bounds_(std::move(bounds)) {}
  std::string label() const override { return "SplitAxis"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    std::vector<Array> parts;
    for (size_t k = 0; k + 1 < bounds_.size(); ++k) {
      std::vector<Index> index(static_cast<size_t>(axis_), Slice{});
      index.push_back(Slice{bounds_[k], bounds_[k + 1]});
      parts.push_back(x[0].get_item(index));
    }
    return parts;
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const VariableNode& in = *inputs()[0];
    std::vector<Variable> parts;
    for (size_t k = 0; k < gy.size(); ++k) {
      if (gy[k].defined()) {
        parts.push_back(gy[k]);
        continue;
      }
      Shape shape = in.shape;
      shape[axis_] = bounds_[k + 1] - bounds_[k];
      parts.emplace_back(Array::zeros(shape, in.dtype, in.device), false);
    }
    return {concat(parts, axis_)};
  }

 private:
  int64_t axis_;                 // normalised
  std::vector<int64_t> bounds_;  // 0, the split indices, the extent
};

}  // namespace

Variable concat(const std::vector<Variable>& xs, int64_t axis) {
  if (xs.empty()) throw ValueError("concat: expected at least one variable, got none");
  const Variable& first = xs[0];
  axis = normalize_axis(axis, first.ndim(), "concat");
  for (size_t i = 1; i < xs.size(); ++i) {
    require_same_dtype_and_device(first, xs[i], "concat");
    bool fits = xs[i].ndim() == first.ndim();
    for (int64_t d = 0; fits && d < first.ndim(); ++d) fits = d == axis || xs[i].shape()[d] == first.shape()[d];
    if (!fits) {
      throw ShapeError(cat("concat: expected shapes matching ", first.shape(), " except on axis ", axis, ", got ",
                           xs[i].shape(), " at position ", i));
    }
  }
  return apply_single<Concat>(xs, axis);
}

Variable stack(const std::vector<Variable>& xs, int64_t axis) {
  if (xs.empty()) throw ValueError("stack: expected at least one variable, got none");
  axis = normalize_axis(axis, xs[0].ndim() + 1, "stack");
  std::vector<Variable> expanded;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].shape() != xs[0].shape()) {
      throw ShapeError(cat("stack: expected variables of shape ", xs[0].shape(), ", got ", xs[i].shape(),
                           " at position ", i));
    }
    expanded.push_back(expand_dims(xs[i], axis));
  }
  return concat(expanded, axis);
}

std::vector<Variable> split_axis(const Variable& x, int64_t sections, int64_t axis) {
  const int64_t extent = x.shape()[normalize_axis(axis, x.ndim(), "split_axis")];
  if (sections <= 0 || extent % sections != 0) {
    throw ShapeError(cat("split_axis: expected a number of sections that divides extent ", extent, " of axis ",
                         axis, " in shape ", x.shape(), ", got ", sections));
  }
  std::vector<int64_t> indices;
  for (int64_t k = 1; k < sections; ++k) indices.push_back(k * (extent / sections));
  return split_axis(x, indices, axis);
}

std::vector<Variable> split_axis(const Variable& x, const std::vector<int64_t>& indices, int64_t axis) {
  axis = normalize_axis(axis, x.ndim(), "split_axis");
  const int64_t extent = x.shape()[axis];
  int64_t previous = 0;
  for (int64_t index : indices) {
    if (index < previous || index > extent) {
      throw IndexError(cat("split_axis: expected non-decreasing indices in [0, ", extent, "] for axis ", axis,
                           " of shape ", x.shape(), ", got ", index, " after ", previous));
    }
    previous = index;
  }
  std::vector<int64_t> bounds{0};
  bounds.insert(bounds.end(), indices.begin(), indices.end());
  bounds.push_back(extent);
  return apply_multi<SplitAxis>({x}, axis, std::move(bounds));
}

}  // namespace kusari::functions
