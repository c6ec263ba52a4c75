#pragma once
// Internal (not installed): what the training-mode batch normalization nodes of normalization.cpp and
// ghost_batch_normalization.cpp share. The residual and ReLU-gate helpers (prepare_residual, relu_gate,
// ones_, zeros_) serve the ghost node's array code; BatchNormalization's fused passes are the
// ops::batch_normalization routines', which keep their own gate.

#include <cstddef>
#include <vector>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/autograd/function_node.h>
#include <kusari/core/channel_gate.h>
#include <kusari/functions/arithmetic.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/normalization.h>
#include <kusari/kernels/ops/normalization.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions::detail {

// The dtype statistics are computed in: float64 stays float64, everything else uses float32.
inline Dtype statistics_dtype(Dtype dtype) { return batch_norm_statistics_dtype(dtype); }

// {x, gamma, beta}, and the residual when defined after checking that it has x's shape, dtype and device
// (ShapeError or DeviceError naming op otherwise): the inputs of a BatchNormalizationNode.
std::vector<Variable> node_inputs(const Variable& x, const Variable& gamma, const Variable& beta,
                                  const Variable& residual, const char* op);

// A training-mode batch normalization of x (input 0) with gamma, beta (inputs 1, 2) and an optional
// residual (input 3), then the activation, whose forward keeps x and gamma and an affine map
// y = scale_·x + shift_ before the activation (per channel, or per group and channel). backward runs
// the subclass's fused array code, or its recorded code when the backward is itself being recorded
// (double backprop), and appends the residual's gradient.
class BatchNormalizationNode : public FunctionNode {
 public:
  explicit BatchNormalizationNode(Activation activation) : activation_(activation) {}

  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) final {
    const std::vector<Variable> retained = get_retained_inputs();
    const bool need_gx = targets.front() == 0;
    std::vector<Variable> grads = is_backprop_enabled()
                                      ? recorded_backward(retained, gy[0])
                                      : fused_backward(retained[0].data(), retained[1].data(), gy[0].data(), need_gx);
    if (inputs().size() == 4) grads.push_back(residual_gradient(gy[0]));
    std::vector<Variable> out;
    for (size_t i : targets) out.push_back(grads[i]);
    return out;
  }

 protected:
  // The gradients of x (only when need_gx), gamma and beta as arrays, nothing recorded.
  virtual std::vector<Variable> fused_backward(const Array& x, const Array& gamma, const Array& gy, bool need_gx) = 0;
  // The same gradients as differentiable functions of (x, gamma, gy), from the retained x and gamma.
  virtual std::vector<Variable> recorded_backward(const std::vector<Variable>& retained, const Variable& gy) = 0;
  // scale_·x + shift_ for the retained x (before the activation).
  virtual Array pre_activation(const Array& x) const = 0;

  // Forward's part with a residual: keeps the output for the ReLU's gate and sets ones_ and zeros_ of
  // the statistics' shape (float64 on device).
  void prepare_residual(const Shape& statistics, const Device& device) {
    if (activation_ == Activation::relu) retain_outputs({0});
    ones_ = Array::ones(statistics, Dtype::float64, device);
    zeros_ = Array::zeros(statistics, Dtype::float64, device);
  }
  // Where the ReLU passes gradients: scale_·x + shift_ > 0, or the output > 0 when a residual was added.
  ChannelGate relu_gate(const Array& x) const {
    if (activation_ != Activation::relu) return {};
    if (inputs().size() < 4) return {x, scale_, shift_};
    return {retained_output(0), ones_, zeros_};
  }
  // The ReLU's derivative as a constant 0/1 array of x's shape in like's dtype (for the recorded backward).
  Variable relu_mask(const Array& like) const {
    const Array y = inputs().size() < 4 ? pre_activation(retained_input(0)) : retained_output(0);
    return select_constant(ops::greater(y, ops::scalar_like(0, y)), 1, 0, like);
  }
  // The residual's gradient: gy where the ReLU passed it (all of gy without one).
  Variable residual_gradient(const Variable& gy) const {
    if (activation_ != Activation::relu) return gy;
    if (!is_backprop_enabled()) return Variable(ops::relu_grad(gy.data(), retained_output(0)), false);
    return gy * relu_mask(gy.data());
  }

  Activation activation_;
  Array scale_, shift_;  // float64, the statistics' shape: y = scale_·x + shift_ before the activation
  // float64, the statistics' shape, set when a residual is added: its weight (ones), and with the ones
  // the identity map through which the ReLU's gate reads the output.
  Array ones_, zeros_;
};

}  // namespace kusari::functions::detail
