#include <kusari/functions/matmul.h>

#include <kusari/functions/arithmetic.h>
#include <kusari/functions/broadcast.h>
#include <kusari/autograd/backprop_mode.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/reduction.h>
#include <kusari/functions/reshape_transpose.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

class MatMul final : public FunctionNode {
 public:
  MatMul(bool transa, bool transb) : transa_(transa), transb_(transb) {}
  std::string label() const override { return "MatMul"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0, 1});
    return {ops::matmul(x[0], x[1], transa_, transb_)};
  }
  // With y = op(a) op(b): g op(a) = gy op(b)^T and g op(b) = op(a)^T gy, transposed back where op transposed.
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    const std::vector<Variable> x = get_retained_inputs();
    const Variable& a = x[0];
    const Variable& b = x[1];
    std::vector<Variable> gx;
    for (size_t i : targets) {
      const Variable g = i == 0 ? (transa_ ? matmul(b, gy[0], transb_, true) : matmul(gy[0], b, false, !transb_))
                                : (transb_ ? matmul(gy[0], a, true, transa_) : matmul(a, gy[0], !transa_, false));
      gx.push_back(sum_to(g, inputs()[i]->shape));
    }
    return gx;
  }

 private:
  bool transa_;
  bool transb_;
};

// y = x W^T (+ b) for x of shape (N, in), W (out, in), b (out,). Forward is one GEMM plus a bias add;
// the first-order backward is three array operations, and is rebuilt from differentiable functions
// only when the backward itself is recorded (double backprop).
class Linear final : public FunctionNode {
 public:
  std::string label() const override { return "Linear"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    retain_inputs({0, 1});
    return {ops::linear(x[0], x[1], x.size() == 3 ? x[2] : Array())};
  }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    std::vector<Variable> grads;
    grads.reserve(targets.size());
    if (!is_backprop_enabled()) {
      const Array& g = gy[0].data();
      for (size_t i : targets) {
        grads.emplace_back(i == 0   ? ops::matmul(g, retained_input(1))
                           : i == 1 ? ops::matmul(g, retained_input(0), true, false)
                                    : ops::sum(g, {0}),
                           false);
      }
      return grads;
    }
    const std::vector<Variable> xw = get_retained_inputs();
    for (size_t i : targets) {
      grads.push_back(i == 0 ? matmul(gy[0], xw[1]) : i == 1 ? matmul(gy[0], xw[0], true, false) : sum(gy[0], {0}));
    }
    return grads;
  }
};

// " (a transposed)" and the like, so a shape message says how the operands were read.
std::string transposition_note(bool transa, bool transb) {
  if (transa && transb) return " (both transposed)";
  if (transa) return " (a transposed)";
  if (transb) return " (b transposed)";
  return "";
}

// Throws ShapeError naming both shapes unless op(a) @ op(b) is defined.
void check_matmul_shapes(const Shape& a, const Shape& b, bool transa, bool transb) {
  auto operands = [&] { return cat("shapes ", a, " and ", b, transposition_note(transa, transb)); };
  if (a.ndim() < 2 || b.ndim() < 2) {
    throw ShapeError(cat("matmul: expected operands with at least 2 axes, got ", operands()));
  }
  const int64_t inner_a = transa ? a[a.ndim() - 2] : a[a.ndim() - 1];
  const int64_t inner_b = transb ? b[b.ndim() - 1] : b[b.ndim() - 2];
  if (inner_a != inner_b) {
    throw ShapeError(cat("matmul: inner dimensions differ (", inner_a, " vs ", inner_b, ") for ", operands()));
  }
  const Shape batch_a(std::vector<int64_t>(a.begin(), a.end() - 2));
  const Shape batch_b(std::vector<int64_t>(b.begin(), b.end() - 2));
  try {
    broadcast_shapes(batch_a, batch_b, "matmul");
  } catch (const ShapeError&) {
    throw ShapeError(cat("matmul: batch axes ", batch_a, " and ", batch_b, " do not broadcast for ", operands()));
  }
}

}  // namespace

Variable matmul(const Variable& a, const Variable& b, bool transa, bool transb) {
  require_same_dtype_and_device(a, b, "matmul");
  require_floating(a, "matmul");
  check_matmul_shapes(a.shape(), b.shape(), transa, transb);
  return apply_single<MatMul>({a, b}, transa, transb);
}

Variable linear(const Variable& x, const Variable& W, const Variable& b) {
  require_same_dtype_and_device(x, W, "linear");
  if (W.ndim() != 2) throw ShapeError(cat("linear: expected W of shape (out, in), got ", W.shape()));
  if (x.ndim() < 2) throw ShapeError(cat("linear: expected x of shape (N, in), got ", x.shape()));
  int64_t features = 1;
  for (int64_t axis = 1; axis < x.ndim(); ++axis) features *= x.shape()[axis];
  if (features != W.shape()[1]) {
    throw ShapeError(cat("linear: expected x with ", W.shape()[1], " features per sample for W of shape ", W.shape(),
                         ", got x of shape ", x.shape()));
  }
  if (b.defined()) {
    require_same_dtype_and_device(x, b, "linear");
    if (b.shape() != Shape{W.shape()[0]}) {
      throw ShapeError(
          cat("linear: expected b of shape (", W.shape()[0], ",) for W of shape ", W.shape(), ", got ", b.shape()));
    }
  }
  const Variable flat = x.ndim() == 2 ? x : reshape(x, Shape{x.shape()[0], features});
  return b.defined() ? apply_single<Linear>({flat, W, b}) : apply_single<Linear>({flat, W});
}

}  // namespace kusari::functions
