#include <kusari/functions/arithmetic.h>

#include <kusari/functions/broadcast.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/math.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// Shared by the binary nodes: each input's gradient is summed back to that input's shape.
class BinaryNode : public FunctionNode {
 protected:
  Variable reduce_to_input(const Variable& g, size_t i) const { return sum_to(g, inputs()[i]->shape); }
};

class Add final : public BinaryNode {
 public:
  std::string label() const override { return "Add"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {ops::add(x[0], x[1])}; }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    std::vector<Variable> gx;
    for (size_t i : targets) gx.push_back(reduce_to_input(gy[0], i));
    return gx;
  }
};

class Sub final : public BinaryNode {
 public:
  std::string label() const override { return "Sub"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {ops::sub(x[0], x[1])}; }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    std::vector<Variable> gx;
    for (size_t i : targets) gx.push_back(reduce_to_input(i == 0 ? gy[0] : neg(gy[0]), i));
    return gx;
  }
};

class Mul final : public BinaryNode {
 public:
  std::string label() const override { return "Mul"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0, 1});
    return {ops::mul(x[0], x[1])};
  }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    const std::vector<Variable> x = get_retained_inputs();
    std::vector<Variable> gx;
    for (size_t i : targets) gx.push_back(reduce_to_input(mul(gy[0], x[1 - i]), i));
    return gx;
  }
};

class Div final : public BinaryNode {
 public:
  std::string label() const override { return "Div"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0, 1});
    return {ops::div(x[0], x[1])};
  }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    const std::vector<Variable> x = get_retained_inputs();
    const Variable ga = div(gy[0], x[1]);
    std::vector<Variable> gx;
    for (size_t i : targets) {
      gx.push_back(reduce_to_input(i == 0 ? ga : neg(div(mul(ga, x[0]), x[1])), i));
    }
    return gx;
  }
};

class Neg final : public FunctionNode {
 public:
  std::string label() const override { return "Neg"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {ops::neg(x[0])}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {neg(gy[0])};
  }
};

class Pow final : public BinaryNode {
 public:
  std::string label() const override { return "Pow"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0, 1});
    retain_outputs({0});
    return {ops::power(x[0], x[1])};
  }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    const std::vector<Variable> x = get_retained_inputs();
    const Variable y = get_retained_outputs()[0];
    std::vector<Variable> gx;
    for (size_t i : targets) {
      // d/da a^b = b a^(b-1); d/db a^b = a^b log a
      const Variable g = i == 0 ? mul(gy[0], mul(x[1], pow(x[0], sub(x[1], scalar_constant(1, x[1])))))
                                : mul(gy[0], mul(y, log(x[0])));
      gx.push_back(reduce_to_input(g, i));
    }
    return gx;
  }
};

class PowScalar final : public FunctionNode {
 public:
  explicit PowScalar(double exponent) : exponent_(exponent) {}
  std::string label() const override { return "PowScalar"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0});
    return {ops::power(x[0], exponent_)};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Variable x = get_retained_inputs()[0];
    return {mul(gy[0], mul(scalar_constant(exponent_, x), pow(x, exponent_ - 1)))};
  }

 private:
  double exponent_;
};

template <class Node>
Variable binary(const Variable& a, const Variable& b, const char* op) {
  require_same_dtype_and_device(a, b, op);
  broadcast_shapes(a.shape(), b.shape(), op);
  return apply_single<Node>({a, b});
}

}  // namespace

Variable add(const Variable& a, const Variable& b) { return binary<Add>(a, b, "add"); }
Variable sub(const Variable& a, const Variable& b) { return binary<Sub>(a, b, "sub"); }
Variable mul(const Variable& a, const Variable& b) { return binary<Mul>(a, b, "mul"); }
Variable div(const Variable& a, const Variable& b) { return binary<Div>(a, b, "div"); }
Variable pow(const Variable& a, const Variable& b) { return binary<Pow>(a, b, "pow"); }
Variable neg(const Variable& x) { return apply_single<Neg>({x}); }

Variable pow(const Variable& x, double exponent) {
  if (exponent == 1.0) return x;
  return apply_single<PowScalar>({x}, exponent);
}

}  // namespace kusari::functions

namespace kusari {
namespace F = functions;
Variable operator+(const Variable& a, const Variable& b) { return F::add(a, b); }
Variable operator-(const Variable& a, const Variable& b) { return F::sub(a, b); }
Variable operator*(const Variable& a, const Variable& b) { return F::mul(a, b); }
Variable operator/(const Variable& a, const Variable& b) { return F::div(a, b); }
Variable operator-(const Variable& x) { return F::neg(x); }
Variable operator+(const Variable& a, double b) { return F::add(a, F::scalar_constant(b, a)); }
Variable operator+(double a, const Variable& b) { return F::add(F::scalar_constant(a, b), b); }
Variable operator-(const Variable& a, double b) { return F::sub(a, F::scalar_constant(b, a)); }
Variable operator-(double a, const Variable& b) { return F::sub(F::scalar_constant(a, b), b); }
Variable operator*(const Variable& a, double b) { return F::mul(a, F::scalar_constant(b, a)); }
Variable operator*(double a, const Variable& b) { return F::mul(F::scalar_constant(a, b), b); }
Variable operator/(const Variable& a, double b) { return F::div(a, F::scalar_constant(b, a)); }
Variable operator/(double a, const Variable& b) { return F::div(F::scalar_constant(a, b), b); }
}  // namespace kusari
