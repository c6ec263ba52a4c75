#include <kusari/functions/activation.h>

#include <kusari/autograd/backprop_mode.h>

#include <kusari/functions/arithmetic.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/math.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// Where the input is positive: the side of the kink each piecewise activation takes.
Array positive(const Array& x) { return ops::greater(x, ops::scalar_like(0, x)); }

// The gradient of relu given its output y: gy where y > 0. Fused array code, rebuilt from differentiable
// functions when the backward itself is recorded.
Variable relu_backward(const Variable& gy, const Array& y) {
  if (!is_backprop_enabled()) return Variable(ops::relu_grad(gy.data(), y), false);
  return mul(gy, select_constant(positive(y), 1, 0, y));
}

class ReLU final : public FunctionNode {
 public:
  std::string label() const override { return "ReLU"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_outputs({0});
    return {ops::relu(x[0])};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {relu_backward(gy[0], retained_output(0))};
  }
};

// relu(a + b) for a and b of one shape as one node: one forward pass, and the ReLU's gradient handed
// to both inputs.
class AddReLU final : public FunctionNode {
 public:
  std::string label() const override { return "AddReLU"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_outputs({0});
    return {ops::add_relu(x[0], x[1])};
  }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    return std::vector<Variable>(targets.size(), relu_backward(gy[0], retained_output(0)));
  }
};

class LeakyReLU final : public FunctionNode {
 public:
  explicit LeakyReLU(double slope) : slope_(slope) {}
  std::string label() const override { return "LeakyReLU"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0});
    return {ops::leaky_relu(x[0], slope_)};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Array x = retained_input(0);
    return {mul(gy[0], select_constant(positive(x), 1, slope_, x))};
  }

 private:
  double slope_;
};

class ELU final : public FunctionNode {
 public:
  explicit ELU(double alpha) : alpha_(alpha) {}
  std::string label() const override { return "ELU"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0});
    retain_outputs({0});
    return {ops::elu(x[0], alpha_)};
  }
  // dy/dx is 1 where x > 0 and alpha e^x = y + alpha elsewhere; y keeps the second derivative.
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Array x = retained_input(0);
    const Variable y = get_retained_outputs()[0];
    const Variable linear_side = select_constant(positive(x), 1, 0, x);
    const Variable exponential_side = select_constant(positive(x), 0, 1, x);
    return {mul(gy[0], add(linear_side, mul(exponential_side, y + alpha_)))};
  }

 private:
  double alpha_;
};

class Sigmoid final : public FunctionNode {
 public:
  std::string label() const override { return "Sigmoid"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_outputs({0});
    return {ops::sigmoid(x[0])};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Variable y = get_retained_outputs()[0];
    return {mul(gy[0], mul(y, 1.0 - y))};
  }
};

class Tanh final : public FunctionNode {
 public:
  std::string label() const override { return "Tanh"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_outputs({0});
    return {ops::tanh(x[0])};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Variable y = get_retained_outputs()[0];
    return {mul(gy[0], 1.0 - square(y))};
  }
};

// Shared by Softmax and LogSoftmax: the shift by the maximum and sums along the (normalised) axis.
class AxisNormalization : public FunctionNode {
 public:
  explicit AxisNormalization(int64_t axis) : axis_(axis) {}

 protected:
  // x - max(x) along the axis (every element <= 0, so its exponential cannot overflow).
  Array shifted(const Array& x) const { return ops::sub(x, ops::amax(x, {axis_}, true)); }
  // e summed along the axis, keeping it with extent 1.
  Array sum_along(const Array& e) const { return ops::sum(e, {axis_}, true); }
  // g summed along the axis, keeping it with extent 1 (differentiable).
  Variable sum_along(const Variable& g) const {
    Shape kept = g.shape();
    kept[axis_] = 1;
    return sum_to(g, kept);
  }

 private:
  int64_t axis_;
};

class Softmax final : public AxisNormalization {
 public:
  using AxisNormalization::AxisNormalization;
  std::string label() const override { return "Softmax"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_outputs({0});
    const Array e = ops::exp(shifted(x[0]));
    return {ops::div(e, sum_along(e))};
  }
  // gx = y * gy - y * sum(y * gy).
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Variable y = get_retained_outputs()[0];
    const Variable y_gy = mul(y, gy[0]);
    return {sub(y_gy, mul(y, sum_along(y_gy)))};
  }
};

class LogSoftmax final : public AxisNormalization {
 public:
  using AxisNormalization::AxisNormalization;
  std::string label() const override { return "LogSoftmax"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_outputs({0});
    const Array s = shifted(x[0]);
    return {ops::sub(s, ops::log(sum_along(ops::exp(s))))};
  }
  // gx = gy - softmax(x) * sum(gy), with softmax(x) = e^y.
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Variable y = get_retained_outputs()[0];
    return {sub(gy[0], mul(exp(y), sum_along(gy[0])))};
  }
};

template <class Node, class... Args>
Variable elementwise(const Variable& x, const char* op, Args... args) {
  require_floating(x, op);
  return apply_single<Node>({x}, args...);
}

template <class Node>
Variable along_axis(const Variable& x, int64_t axis, const char* op) {
  require_floating(x, op);
  return apply_single<Node>({x}, normalize_axis(axis, x.ndim(), op));
}

}  // namespace

Variable relu(const Variable& x) { return elementwise<ReLU>(x, "relu"); }
Variable add_relu(const Variable& a, const Variable& b) {
  require_floating(a, "add_relu");
  require_same_dtype_and_device(a, b, "add_relu");
  if (a.shape() != b.shape()) {
    throw ShapeError(cat("add_relu: expected operands of one shape, got ", a.shape(), " and ", b.shape()));
  }
  return apply_single<AddReLU>({a, b});
}
Variable leaky_relu(const Variable& x, double slope) { return elementwise<LeakyReLU>(x, "leaky_relu", slope); }
Variable elu(const Variable& x, double alpha) { return elementwise<ELU>(x, "elu", alpha); }
Variable sigmoid(const Variable& x) { return elementwise<Sigmoid>(x, "sigmoid"); }
Variable tanh(const Variable& x) { return elementwise<Tanh>(x, "tanh"); }
Variable softmax(const Variable& x, int64_t axis) { return along_axis<Softmax>(x, axis, "softmax"); }
Variable log_softmax(const Variable& x, int64_t axis) { return along_axis<LogSoftmax>(x, axis, "log_softmax"); }

}  // namespace kusari::functions
