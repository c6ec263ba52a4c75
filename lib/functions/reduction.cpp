#include <kusari/functions/reduction.h>

#include <limits>

#include <kusari/functions/arithmetic.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/math.h>
#include <kusari/functions/reshape_transpose.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// Base of the reductions: keeps the normalised axes and spreads output-shaped values over the input.
class ReductionNode : public FunctionNode {
 public:
  ReductionNode(std::vector<int64_t> axes, bool keepdims) : axes_(std::move(axes)), keepdims_(keepdims) {}

 protected:
  // v, shaped like the output, broadcast back to the input's shape.
  Variable spread(const Variable& v) const {
    const Shape& in = inputs()[0]->shape;
    return broadcast_to(reshape(v, ops::reduced_shape(in, axes_, true)), in);
  }

  std::vector<int64_t> axes_;
  bool keepdims_;
};

class Sum final : public ReductionNode {
 public:
  using ReductionNode::ReductionNode;
  std::string label() const override { return "Sum"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {ops::sum(x[0], axes_, keepdims_)}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {spread(gy[0])};
  }
};

// Max and min: the gradient goes to the elements equal to the result.
class ReduceExtremum final : public ReductionNode {
 public:
  ReduceExtremum(std::vector<int64_t> axes, bool keepdims, bool take_max)
      : ReductionNode(std::move(axes), keepdims), take_max_(take_max) {}
  std::string label() const override { return take_max_ ? "Max" : "Min"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0});
    retain_outputs({0});
    return {take_max_ ? ops::amax(x[0], axes_, keepdims_) : ops::amin(x[0], axes_, keepdims_)};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Array x = retained_input(0);
    const Array y = retained_output(0).reshape(ops::reduced_shape(x.shape(), axes_, true));
    const Variable is_extreme(ops::equal(x, y).astype(x.dtype()), false);
    return {mul(spread(gy[0]), is_extreme)};
  }

 private:
  bool take_max_;
};

class LogSumExp final : public ReductionNode {
 public:
  using ReductionNode::ReductionNode;
  std::string label() const override { return "LogSumExp"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0});
    retain_outputs({0});
    // Shift by the maximum so exp cannot overflow; an infinite maximum is left unshifted (inf - inf is NaN).
    const Array m = ops::amax(x[0], axes_, true);
    const Array inf = ops::scalar_like(std::numeric_limits<double>::infinity(), m);
    const Array shift = ops::where(ops::less(ops::abs(m), inf), m, ops::scalar_like(0, m));
    const Array y = ops::add(ops::log(ops::sum(ops::exp(ops::sub(x[0], shift)), axes_, true)), shift);
    return {keepdims_ ? y : y.reshape(ops::reduced_shape(x[0].shape(), axes_, false))};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Variable x = get_retained_inputs()[0];
    const Variable y = get_retained_outputs()[0];
    return {mul(spread(gy[0]), exp(sub(x, spread(y))))};  // the softmax of x along the axes
  }
};

// The normalised axes of a reduction that needs at least one element in every reduced group.
std::vector<int64_t> nonempty_reduction_axes(const Variable& x, const std::vector<int64_t>& axes, const char* op) {
  std::vector<int64_t> normalized = ops::reduction_axes(axes, x.ndim(), op);
  for (int64_t axis : normalized) {
    if (x.shape()[axis] == 0) {
      throw ShapeError(cat(op, ": expected a non-empty reduction, got extent 0 on axis ", axis, " of shape ",
                           x.shape()));
    }
  }
  return normalized;
}

}  // namespace

Variable sum(const Variable& x, const std::vector<int64_t>& axes, bool keepdims) {
  return apply_single<Sum>({x}, ops::reduction_axes(axes, x.ndim(), "sum"), keepdims);
}

Variable mean(const Variable& x, const std::vector<int64_t>& axes, bool keepdims) {
  require_floating(x, "mean");
  const std::vector<int64_t> normalized = ops::reduction_axes(axes, x.ndim(), "mean");
  int64_t count = 1;
  for (int64_t axis : normalized) count *= x.shape()[axis];
  return sum(x, normalized, keepdims) / static_cast<double>(count);
}

Variable max(const Variable& x, const std::vector<int64_t>& axes, bool keepdims) {
  return apply_single<ReduceExtremum>({x}, nonempty_reduction_axes(x, axes, "max"), keepdims, true);
}

Variable min(const Variable& x, const std::vector<int64_t>& axes, bool keepdims) {
  return apply_single<ReduceExtremum>({x}, nonempty_reduction_axes(x, axes, "min"), keepdims, false);
}

Variable argmax(const Variable& x, std::optional<int64_t> axis, bool keepdims) {
  return Variable(ops::argmax(x.data(), axis, keepdims), false);
}

Variable logsumexp(const Variable& x, const std::vector<int64_t>& axes, bool keepdims) {
  require_floating(x, "logsumexp");
  return apply_single<LogSumExp>({x}, nonempty_reduction_axes(x, axes, "logsumexp"), keepdims);
}

}  // namespace kusari::functions
