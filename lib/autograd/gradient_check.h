#pragma once
// Checks a function's backward against finite differences, as chainer.gradient_check does.

#include <functional>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::gradient_check {

// Thrown when analytical and numerical gradients disagree; the message names the input and element.
class KUSARI_API GradientCheckError : public Error {
 public:
  using Error::Error;
};

// Tolerances and step of a check.
struct KUSARI_API CheckOptions {
  double eps = 1e-3;   // finite-difference step
  double atol = 1e-5;  // absolute tolerance
  double rtol = 1e-4;  // relative tolerance (of the numerical value)
};

// A function under test: variables in, variables out.
using Function = std::function<std::vector<Variable>(const std::vector<Variable>&)>;

// Central-difference gradient of sum_k <f(x)_k, grad_outputs_k> with respect to every floating input
// (an undefined array for integer inputs such as labels).
KUSARI_API std::vector<Array> numerical_grad(const Function& f, const std::vector<Array>& inputs,
                                             const std::vector<Array>& grad_outputs, double eps);

// Throws GradientCheckError unless backward() of f at `inputs`, seeded with grad_outputs, matches the
// numerical gradient for every floating input. Integer inputs are treated as constants.
KUSARI_API void check_backward(const Function& f, const std::vector<Array>& inputs, const std::vector<Array>& grad_outputs,
                               const CheckOptions& options = {});

// Checks the gradient of f's gradient: the function (x, gy) -> dx computed with enable_double_backprop
// is itself checked against finite differences, seeded with grad_grad_inputs (one per input).
KUSARI_API void check_double_backward(const Function& f, const std::vector<Array>& inputs,
                                      const std::vector<Array>& grad_outputs, const std::vector<Array>& grad_grad_inputs,
                                      const CheckOptions& options = {});

}  // namespace kusari::gradient_check
