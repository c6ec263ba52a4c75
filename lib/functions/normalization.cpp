#include <kusari/functions/normalization.h>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/functions/arithmetic.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/cast.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/math.h>
#include <kusari/functions/reshape_transpose.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// The dtype statistics are computed in: float64 stays float64, everything else uses float32.
Dtype statistics_dtype(Dtype dtype) { return dtype == Dtype::float64 ? Dtype::float64 : Dtype::float32; }

// (1, C, 1, ...) for an input of x's rank.
Shape channel_shape(const Shape& x, int64_t channels) {
  std::vector<int64_t> dims(static_cast<size_t>(x.ndim()), 1);
  dims[1] = channels;
  return Shape(std::move(dims));
}

std::vector<int64_t> reduced_axes(int64_t ndim) {
  std::vector<int64_t> axes{0};
  for (int64_t i = 2; i < ndim; ++i) axes.push_back(i);
  return axes;
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

// Training-mode batch normalization. Forward and the first-order backward are fused array code; when
// the backward itself is being recorded (double backprop) it is rebuilt from differentiable functions.
class BatchNormalization final : public FunctionNode {
 public:
  explicit BatchNormalization(double eps) : eps_(eps) {}
  std::string label() const override { return "BatchNormalization"; }

  std::vector<Array> forward(const std::vector<Array>& in) override {
    const Dtype compute = statistics_dtype(in[0].dtype());
    const Array x = in[0].astype(compute);
    const int64_t channels = x.shape()[1];
    const Shape cshape = channel_shape(x.shape(), channels);
    const std::vector<int64_t> axes = reduced_axes(x.ndim());
    count_ = x.size() / std::max<int64_t>(1, channels);
    mean_ = ops::mean(x, axes, true);
    const Array centered = ops::sub(x, mean_);
    var_ = ops::mean(ops::square(centered), axes, true);
    inv_std_ = ops::reciprocal(ops::sqrt(ops::add(var_, ops::scalar_like(eps_, var_))));
    xhat_ = ops::mul(centered, inv_std_);
    const Array gamma = in[1].astype(compute).reshape(cshape), beta = in[2].astype(compute).reshape(cshape);
    retain_inputs({0, 1});
    return {ops::add(ops::mul(xhat_, gamma), beta).astype(in[0].dtype())};
  }

  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    const std::vector<Variable> retained = get_retained_inputs();
    std::vector<Variable> grads = is_backprop_enabled() ? recorded_backward(retained, gy[0])
                                                        : fused_backward(retained[1].data(), gy[0].data());
    std::vector<Variable> out;
    for (size_t i : targets) out.push_back(grads[i]);
    xhat_ = inv_std_ = Array();
    return out;
  }

  // The statistics of the last forward, shape (C,).
  Array mean() const { return mean_.reshape(Shape{mean_.size()}); }
  Array var() const { return var_.reshape(Shape{var_.size()}); }
  int64_t count() const { return count_; }

 private:
  std::vector<Variable> fused_backward(const Array& gamma_in, const Array& gy_in) {
    const Dtype compute = xhat_.dtype();
    const Array gy = gy_in.astype(compute);
    const std::vector<int64_t> axes = reduced_axes(gy.ndim());
    const Shape cshape = mean_.shape();
    const Array gbeta = ops::sum(gy, axes, true);
    const Array ggamma = ops::sum(ops::mul(gy, xhat_), axes, true);
    const Array m = ops::scalar_like(static_cast<double>(count_), gy);
    const Array coefficient = ops::div(ops::mul(gamma_in.astype(compute).reshape(cshape), inv_std_), m);
    const Array gx = ops::mul(coefficient, ops::sub(ops::sub(ops::mul(gy, m), gbeta), ops::mul(xhat_, ggamma)));
    return {Variable(gx.astype(inputs()[0]->dtype), false),
            Variable(ggamma.reshape(inputs()[1]->shape).astype(inputs()[1]->dtype), false),
            Variable(gbeta.reshape(inputs()[2]->shape).astype(inputs()[2]->dtype), false)};
  }

  // The same gradients as differentiable functions of (x, gamma, gy).
  std::vector<Variable> recorded_backward(const std::vector<Variable>& retained, const Variable& gy_in) {
    const Dtype compute = xhat_.dtype();
    const Variable x = cast(retained[0], compute), gamma = cast(retained[1], compute);
    const Variable gy = cast(gy_in, compute);
    const Shape cshape = mean_.shape();
    const double m = static_cast<double>(count_);
    const Variable mean = sum_to(x, cshape) / m;
    const Variable centered = x - broadcast_to(mean, x.shape());
    const Variable var = sum_to(square(centered), cshape) / m;
    const Variable inv_std = pow(var + eps_, -0.5);
    const Variable xhat = centered * broadcast_to(inv_std, x.shape());
    const Variable gbeta = sum_to(gy, cshape);
    const Variable ggamma = sum_to(gy * xhat, cshape);
    const Variable gamma_b = broadcast_to(reshape(gamma, cshape), x.shape());
    const Variable coefficient = gamma_b * broadcast_to(inv_std, x.shape()) / m;
    const Variable gx = coefficient * (gy * m - broadcast_to(gbeta, x.shape()) - xhat * broadcast_to(ggamma, x.shape()));
    return {cast(gx, inputs()[0]->dtype), cast(reshape(ggamma, inputs()[1]->shape), inputs()[1]->dtype),
            cast(reshape(gbeta, inputs()[2]->shape), inputs()[2]->dtype)};
  }

  double eps_;
  int64_t count_ = 0;
  Array mean_, var_, inv_std_, xhat_;
};

}  // namespace

BatchNormalizationResult batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                             double eps) {
  check_arguments(x, {&gamma, &beta}, "batch_normalization");
  if (x.size() / x.shape()[1] < 2 && x.size() > 0) {
    throw ShapeError(cat("batch_normalization: expected more than one value per channel in training mode, got input ",
                         x.shape()));
  }
  auto node = std::make_shared<BatchNormalization>(eps);
  Variable y = node->apply({x, gamma, beta})[0];
  return {y, node->mean(), node->var(), node->count()};
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
