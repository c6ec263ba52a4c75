#include <kusari/functions/normalization.h>

#include <utility>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/functions/arithmetic.h>
#include <kusari/functions/detail/batch_normalization.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/cast.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/math.h>
#include <kusari/functions/reshape_transpose.h>
#include <kusari/kernels/layer_routines.h>
#include <kusari/kernels/optimizer_routines.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

using detail::statistics_dtype;

// (1, C, 1, ...) for an input of x's rank.
Shape channel_shape(const Shape& x, int64_t channels) {
  std::vector<int64_t> dims(static_cast<size_t>(x.ndim()), 1);
  dims[1] = channels;
  return Shape(std::move(dims));
}

void check_arguments(const Variable& x, const std::vector<const Variable*>& per_channel, const char* op) {
  if (x.ndim() < 2) throw ShapeError(cat(op, ": expected an input of shape (N, C, ...), got ", x.shape()));
  if (!is_floating(x.dtype())) throw DtypeError(cat(op, ": expected a floating input, got ", x.dtype()));
  const int64_t channels = x.shape()[1];
  for (const Variable* v : per_channel) {
    if (v->shape() != Shape{channels}) {
      throw ShapeError(cat(op, ": expected per-channel parameters of shape (", channels, ",) for input ", x.shape(),
                           ", got ", v->shape()));
    }
    if (!is_floating(v->dtype())) throw DtypeError(cat(op, ": expected floating parameters, got ", v->dtype()));
  }
}

// Training-mode batch normalization, optionally plus a residual (input 3) and followed by a ReLU.
// Forward and the first-order backward are the device's batch normalization routines (x and gamma are
// kept, and the output where the backward reads it: the ReLU's gate after a residual, or a device's
// fused ReLU backward; otherwise the gate is recomputed from x);
// when the backward itself is being recorded (double backprop) it is rebuilt from differentiable
// functions.
// With a batch_sum the batch is split across processes: statistics and the gradient sums that x's
// gradient needs are summed over the parts, while gamma's and beta's gradients stay this part's share.
class BatchNormalization final : public detail::BatchNormalizationNode {
 public:
  BatchNormalization(double eps, BatchSum batch_sum, Activation activation)
      : BatchNormalizationNode(activation), eps_(eps), batch_sum_(std::move(batch_sum)) {}
  std::string label() const override { return "BatchNormalization"; }

  std::vector<Array> forward(const std::vector<Array>& in) override {
    const Array& x = in[0];
    statistics_dtype_ = statistics_dtype(x.dtype());
    const bool residual = in.size() == 4;
    auto [y, statistics] = ops::batch_normalization(x, in[1], in[2], residual ? in[3] : Array(), eps_,
                                                    activation_ == Activation::relu, part_sum());
    statistics_ = std::move(statistics);
    scale_ = statistics_.scale;
    shift_ = statistics_.shift;
    retain_inputs({0, 1});
    if (activation_ == Activation::relu && statistics_.backward_reads_output) retain_outputs({0});
    return {y};
  }

  // The mean and variance of the last forward, shape (C,), in the statistics dtype (converted together).
  std::vector<Array> mean_and_var() const {
    return ops::astype_together({statistics_.mean, statistics_.var}, {statistics_dtype_, statistics_dtype_});
  }
  int64_t count() const { return statistics_.count; }

 private:
  // batch_sum on arrays (nothing recorded), or an empty function for a whole batch.
  ops::PartSum part_sum() const {
    if (!batch_sum_) return {};
    return [this](const Array& totals) { return batch_sum_(Variable(totals, false)).data(); };
  }

  // The routine's gradients: one pass for Σgy and Σgy·x, one affine pass for gx.
  std::vector<Variable> fused_backward(const Array& x, const Array& gamma, const Array& gy, bool need_gx) override {
    const bool relu = activation_ == Activation::relu;
    const Array y = relu && statistics_.backward_reads_output ? retained_output(0) : Array();
    const BatchNormGradients g = ops::batch_normalization_backward(x, gamma, gy, y, statistics_, relu, need_gx,
                                                                   part_sum());
    const std::vector<Array> gparams =
        ops::astype_together({g.ggamma, g.gbeta}, {inputs()[1]->dtype, inputs()[2]->dtype});
    return {g.gx.defined() ? Variable(g.gx, false) : Variable(), Variable(gparams[0].reshape(inputs()[1]->shape), false),
            Variable(gparams[1].reshape(inputs()[2]->shape), false)};
  }

  // The same gradients as differentiable functions of (x, gamma, gy) (and of the other parts' x and
  // gy through batch_sum).
  std::vector<Variable> recorded_backward(const std::vector<Variable>& retained, const Variable& gy_in) override {
    const Dtype compute = statistics_dtype(retained[0].dtype());
    const Variable x = cast(retained[0], compute), gamma = cast(retained[1], compute);
    const Shape cshape = channel_shape(x.shape(), x.shape()[1]);
    const double m = static_cast<double>(statistics_.count);
    const auto whole = [this](const Variable& v) { return batch_sum_ ? batch_sum_(v) : v; };
    const Variable mean = whole(sum_to(x, cshape)) / m;
    const Variable centered = x - broadcast_to(mean, x.shape());
    const Variable var = whole(sum_to(square(centered), cshape)) / m;
    const Variable inv_std = pow(var + eps_, -0.5);
    const Variable xhat = centered * broadcast_to(inv_std, x.shape());
    Variable gy = cast(gy_in, compute);
    if (activation_ == Activation::relu) gy = gy * relu_mask(xhat.data());
    const Variable gbeta = sum_to(gy, cshape);
    const Variable ggamma = sum_to(gy * xhat, cshape);
    const Variable gamma_b = broadcast_to(reshape(gamma, cshape), x.shape());
    const Variable coefficient = gamma_b * broadcast_to(inv_std, x.shape()) / m;
    const Variable gx = coefficient * (gy * m - broadcast_to(whole(gbeta), x.shape()) -
                                       xhat * broadcast_to(whole(ggamma), x.shape()));
    return {cast(gx, inputs()[0]->dtype), cast(reshape(ggamma, inputs()[1]->shape), inputs()[1]->dtype),
            cast(reshape(gbeta, inputs()[2]->shape), inputs()[2]->dtype)};
  }

  // scale·x + shift per channel.
  Array pre_activation(const Array& x) const override {
    return ops::channel_affine(x, scale_, Array(), Array(), shift_);
  }

  double eps_;
  BatchSum batch_sum_;
  Dtype statistics_dtype_ = Dtype::float32;
  BatchNormStatistics statistics_;  // the last forward's (float64, shape (C,)), its scale and shift in scale_, shift_
};

BatchNormalizationResult apply_batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                                   double eps, BatchSum batch_sum, Activation activation,
                                                   const Variable& residual, const char* op) {
  const std::vector<Variable> inputs = detail::node_inputs(x, gamma, beta, residual, op);
  auto node = std::allocate_shared<BatchNormalization>(PoolAllocator<BatchNormalization>(), eps, std::move(batch_sum),
                                                       activation);
  Variable y = node->apply(inputs)[0];
  const std::vector<Array> statistics = node->mean_and_var();
  return {y, statistics[0], statistics[1], node->count()};
}

}  // namespace

namespace detail {

std::vector<Variable> node_inputs(const Variable& x, const Variable& gamma, const Variable& beta,
                                  const Variable& residual, const char* op) {
  std::vector<Variable> inputs{x, gamma, beta};
  if (residual.defined()) {
    if (residual.shape() != x.shape() || residual.dtype() != x.dtype()) {
      throw ShapeError(cat(op, ": expected a residual of the input's shape ", x.shape(), " and dtype ", x.dtype(),
                           ", got ", residual.shape(), " and ", residual.dtype()));
    }
    require_same_dtype_and_device(x, residual, op);
    inputs.push_back(residual);
  }
  return inputs;
}

}  // namespace detail

BatchNormalizationResult batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                             double eps, Activation activation, const Variable& residual) {
  check_arguments(x, {&gamma, &beta}, "batch_normalization");
  if (x.size() / x.shape()[1] < 2 && x.size() > 0) {
    throw ShapeError(cat("batch_normalization: expected more than one value per channel in training mode, got input ",
                         x.shape()));
  }
  return apply_batch_normalization(x, gamma, beta, eps, nullptr, activation, residual, "batch_normalization");
}

BatchNormalizationResult split_batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                                   const BatchSum& batch_sum, double eps, Activation activation,
                                                   const Variable& residual) {
  check_arguments(x, {&gamma, &beta}, "split_batch_normalization");
  if (!batch_sum) throw ValueError("split_batch_normalization: expected a batch_sum function, got an empty one");
  return apply_batch_normalization(x, gamma, beta, eps, batch_sum, activation, residual, "split_batch_normalization");
}

Variable fixed_batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                   const Variable& mean, const Variable& var, double eps) {
  check_arguments(x, {&gamma, &beta, &mean, &var}, "fixed_batch_normalization");
  const Dtype compute = statistics_dtype(x.dtype());
  const Shape cshape = channel_shape(x.shape(), x.shape()[1]);
  auto per_channel = [&](const Variable& v) { return broadcast_to(reshape(cast(v, compute), cshape), x.shape()); };
  const Variable inv_std = pow(cast(var, compute) + eps, -0.5);
  const Variable scale = per_channel(cast(gamma, compute) * inv_std);
  const Variable shift = per_channel(cast(beta, compute) - cast(mean, compute) * cast(gamma, compute) * inv_std);
  return cast(cast(x, compute) * scale + shift, x.dtype());
}

}  // namespace kusari::functions
