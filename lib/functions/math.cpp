#include <kusari/functions/math.h>

#include <kusari/functions/arithmetic.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

class Exp final : public FunctionNode {
 public:
  std::string label() const override { return "Exp"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_outputs({0});
    return {ops::exp(x[0])};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {mul(gy[0], get_retained_outputs()[0])};
  }
};

class Log final : public FunctionNode {
 public:
  std::string label() const override { return "Log"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0});
    return {ops::log(x[0])};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {div(gy[0], get_retained_inputs()[0])};
  }
};

class Sqrt final : public FunctionNode {
 public:
  std::string label() const override { return "Sqrt"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_outputs({0});
    return {ops::sqrt(x[0])};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {div(gy[0], get_retained_outputs()[0] * 2.0)};
  }
};

class Square final : public FunctionNode {
 public:
  std::string label() const override { return "Square"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0});
    return {ops::square(x[0])};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {mul(gy[0], get_retained_inputs()[0] * 2.0)};
  }
};

class Abs final : public FunctionNode {
 public:
  std::string label() const override { return "Abs"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0});
    return {ops::abs(x[0])};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {mul(gy[0], Variable(ops::sign(retained_input(0)), false))};
  }
};

// Maximum and minimum: the gradient is routed by a mask computed in forward.
class Extremum final : public FunctionNode {
 public:
  explicit Extremum(bool take_max) : take_max_(take_max) {}
  std::string label() const override { return take_max_ ? "Maximum" : "Minimum"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    const Shape shape = broadcast_shapes(x[0].shape(), x[1].shape(), take_max_ ? "maximum" : "minimum");
    const Array a = x[0].broadcast_to(shape), b = x[1].broadcast_to(shape);
    mask_ = take_max_ ? ops::greater_equal(a, b) : ops::less_equal(a, b);
    return {ops::where(mask_, a, b)};
  }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    const Array zero = ops::scalar_like(0, gy[0].data());
    const Array to_a = ops::where(mask_, ops::scalar_like(1, zero), zero);
    std::vector<Variable> gx;
    for (size_t i : targets) {
      const Array route = i == 0 ? to_a : ops::sub(ops::scalar_like(1, zero), to_a);
      gx.push_back(sum_to(mul(gy[0], Variable(route, false)), inputs()[i]->shape));
    }
    return gx;
  }

 private:
  bool take_max_;
  Array mask_;
};

}  // namespace

Variable exp(const Variable& x) { return apply_single<Exp>({x}); }
Variable log(const Variable& x) { return apply_single<Log>({x}); }
Variable sqrt(const Variable& x) { return apply_single<Sqrt>({x}); }
Variable square(const Variable& x) { return apply_single<Square>({x}); }
Variable abs(const Variable& x) { return apply_single<Abs>({x}); }

Variable maximum(const Variable& a, const Variable& b) {
  require_same_dtype_and_device(a, b, "maximum");
  return apply_single<Extremum>({a, b}, true);
}

Variable minimum(const Variable& a, const Variable& b) {
  require_same_dtype_and_device(a, b, "minimum");
  return apply_single<Extremum>({a, b}, false);
}

}  // namespace kusari::functions
