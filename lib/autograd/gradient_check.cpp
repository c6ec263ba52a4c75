#include <kusari/autograd/gradient_check.h>

#include <cmath>

#include <kusari/kernels/routines.h>

namespace kusari::gradient_check {
namespace {

std::vector<Variable> run(const Function& f, const std::vector<Array>& inputs, const char* what) {
  std::vector<Variable> xs;
  for (const Array& x : inputs) xs.emplace_back(x, is_floating(x.dtype()));
  std::vector<Variable> ys = f(xs);
  if (ys.empty()) throw ValueError(cat("gradient_check: the function returned no outputs (", what, ")"));
  return ys;
}

// sum_k <y_k, gy_k> in float64.
double weighted_sum(const std::vector<Variable>& ys, const std::vector<Array>& grad_outputs) {
  if (ys.size() != grad_outputs.size()) {
    throw ValueError(cat("gradient_check: expected ", ys.size(), " output gradients, got ", grad_outputs.size()));
  }
  double total = 0;
  for (size_t k = 0; k < ys.size(); ++k) {
    if (!grad_outputs[k].defined()) continue;
    const Array y = ys[k].data().astype(Dtype::float64);
    const Array gy = grad_outputs[k].astype(Dtype::float64);
    total += ops::sum(ops::mul(y, gy)).item<double>();
  }
  return total;
}

}  // namespace

std::vector<Array> numerical_grad(const Function& f, const std::vector<Array>& inputs,
                                  const std::vector<Array>& grad_outputs, double eps) {
  std::vector<Array> work;
  for (const Array& x : inputs) work.push_back(x.copy());
  std::vector<Array> grads;
  for (size_t i = 0; i < work.size(); ++i) {
    if (!is_floating(work[i].dtype())) {
      grads.emplace_back();
      continue;
    }
    const Array flat = work[i].reshape(Shape{work[i].size()});
    const std::vector<double> original = flat.to_vector<double>();
    std::vector<double> g(original.size());
    for (size_t j = 0; j < original.size(); ++j) {
      const Array element = flat.get_item({static_cast<int64_t>(j)});
      element.fill(original[j] + eps);
      const double plus = weighted_sum(run(f, work, "numerical"), grad_outputs);
      element.fill(original[j] - eps);
      const double minus = weighted_sum(run(f, work, "numerical"), grad_outputs);
      element.fill(original[j]);
      g[j] = (plus - minus) / (2 * eps);
    }
    grads.push_back(Array::from_vector(g, work[i].shape(), Dtype::float64, work[i].device()));
  }
  return grads;
}

void check_backward(const Function& f, const std::vector<Array>& inputs, const std::vector<Array>& grad_outputs,
                    const CheckOptions& options) {
  std::vector<Variable> xs;
  for (const Array& x : inputs) xs.emplace_back(x.copy(), is_floating(x.dtype()));
  const std::vector<Variable> ys = f(xs);
  if (ys.size() != grad_outputs.size()) {
    throw ValueError(cat("check_backward: expected ", ys.size(), " output gradients, got ", grad_outputs.size()));
  }
  std::vector<Variable> seeds;
  for (const Array& gy : grad_outputs) seeds.push_back(gy.defined() ? Variable(gy, false) : Variable());
  backward(ys, seeds);
  const std::vector<Array> numerical = numerical_grad(f, inputs, grad_outputs, options.eps);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!numerical[i].defined()) continue;
    const std::vector<double> expected = numerical[i].to_vector<double>();
    const Array analytic = xs[i].grad();
    const std::vector<double> actual =
        analytic.defined() ? analytic.to_vector<double>() : std::vector<double>(expected.size(), 0.0);
    for (size_t j = 0; j < expected.size(); ++j) {
      const double tolerance = options.atol + options.rtol * std::fabs(expected[j]);
      if (!(std::fabs(actual[j] - expected[j]) <= tolerance)) {
        throw GradientCheckError(cat("check_backward: gradient of input ", i, " (shape ", inputs[i].shape(),
                                     ") differs at flat element ", j, ": backward gave ", actual[j],
                                     ", finite differences gave ", expected[j], " (tolerance ", tolerance, ")"));
      }
    }
  }
}

void check_double_backward(const Function& f, const std::vector<Array>& inputs,
                           const std::vector<Array>& grad_outputs, const std::vector<Array>& grad_grad_inputs,
                           const CheckOptions& options) {
  const size_t n = inputs.size();
  std::vector<size_t> differentiable;
  for (size_t i = 0; i < n; ++i) {
    if (is_floating(inputs[i].dtype())) differentiable.push_back(i);
  }
  // (x..., gy...) -> (gx for each floating input), built with a recorded backward.
  Function first_order = [&](const std::vector<Variable>& args) {
    std::vector<Variable> xs(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<Variable> gys(args.begin() + static_cast<std::ptrdiff_t>(n), args.end());
    std::vector<Variable> ys = f(xs);
    backward(ys, gys, {.enable_double_backprop = true});
    std::vector<Variable> gxs;
    for (size_t i : differentiable) {
      Variable gx = xs[i].grad_var();
      gxs.push_back(gx.defined() ? gx : Variable(Array::zeros(xs[i].shape(), xs[i].dtype(), xs[i].device()), false));
      xs[i].cleargrad();
    }
    return gxs;
  };
  std::vector<Array> args = inputs;
  args.insert(args.end(), grad_outputs.begin(), grad_outputs.end());
  std::vector<Array> seeds;
  for (size_t i : differentiable) seeds.push_back(grad_grad_inputs.at(i));
  check_backward(first_order, args, seeds, options);
}

}  // namespace kusari::gradient_check
