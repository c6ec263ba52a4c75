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

// Sums per-channel arrays over the parts of a split batch (arrays in, arrays out, nothing recorded).
Array sum_parts(const BatchSum& batch_sum, const Array& array) { return batch_sum(Variable(array, false)).data(); }

// Training-mode batch normalization. Forward and the first-order backward are fused array code; when
// the backward itself is being recorded (double backprop) it is rebuilt from differentiable functions.
// With a batch_sum the batch is split across processes: statistics and the gradient sums that x's
// gradient needs are summed over the parts, while gamma's and beta's gradients stay this part's share.
class BatchNormalization final : public FunctionNode {
 public:
  BatchNormalization(double eps, BatchSum batch_sum) : eps_(eps), batch_sum_(std::move(batch_sum)) {}
  std::string label() const override { return "BatchNormalization"; }

  std::vector<Array> forward(const std::vector<Array>& in) override {
    const Dtype compute = statistics_dtype(in[0].dtype());
    const Array x = in[0].astype(compute);
    const int64_t channels = x.shape()[1];
    const std::vector<int64_t> axes = reduced_axes(x.ndim());
    count_ = x.size() / std::max<int64_t>(1, channels);
    if (batch_sum_) {
      split_statistics(x, axes);
      xhat_ = ops::mul(ops::sub(x, mean_), inv_std_);
    } else {
      mean_ = ops::mean(x, axes, true);
      const Array centered = ops::sub(x, mean_);
      var_ = ops::mean(ops::square(centered), axes, true);
      inv_std_ = inverse_std(var_);
      xhat_ = ops::mul(centered, inv_std_);
    }
    const Shape cshape = mean_.shape();
    const Array gamma = in[1].astype(compute).reshape(cshape), beta = in[2].astype(compute).reshape(cshape);
    retain_inputs({0, 1});
    return {ops::add(ops::mul(xhat_, gamma), beta).astype(in[0].dtype())};
  }

  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    const std::vector<Variable> retained = get_retained_inputs();
    const bool need_gx = targets.front() == 0;
    std::vector<Variable> grads = is_backprop_enabled() ? recorded_backward(retained, gy[0])
                                                        : fused_backward(retained[1].data(), gy[0].data(), need_gx);
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
  Array inverse_std(const Array& var) const {
    return ops::reciprocal(ops::sqrt(ops::add(var, ops::scalar_like(eps_, var))));
  }

  // mean_, var_, inv_std_ and count_ of the whole split batch, from one sum of [Σx, Σx², count] over
  // the parts. Each part sends Σx² as M2 + n·mean² from its own centred M2, in float64, so the
  // variance E[x²] - E[x]² does not cancel away in the statistics dtype.
  void split_statistics(const Array& x, const std::vector<int64_t>& axes) {
    const Dtype compute = x.dtype();
    const Shape cshape = channel_shape(x.shape(), x.shape()[1]);
    const Array sum = ops::sum(x, axes, true);
    const Array local_mean = ops::div(sum, ops::scalar_like(static_cast<double>(std::max<int64_t>(count_, 1)), sum));
    const Array m2 = ops::sum(ops::square(ops::sub(x, local_mean)), axes, true);
    const Array sum64 = sum.astype(Dtype::float64).reshape(Shape{sum.size()});
    const Array mean64 = local_mean.astype(Dtype::float64).reshape(sum64.shape());
    const Array square_sum64 = ops::add(m2.astype(Dtype::float64).reshape(sum64.shape()), ops::mul(sum64, mean64));
    const Array totals = sum_parts(batch_sum_, ops::concatenate({sum64, square_sum64,
                                                                 Array::full({1}, static_cast<double>(count_), Dtype::float64)}, 0));
    const int64_t channels = sum.size();
    count_ = static_cast<int64_t>(totals.get_item({int64_t{2} * channels}).item<double>());
    if (count_ < 2) {
      throw ShapeError(cat("batch_normalization: expected more than one value per channel in training mode over "
                           "all parts of the batch, got ", count_));
    }
    const Array n = ops::scalar_like(static_cast<double>(count_), totals);
    const Array mean = ops::div(totals.get_item({Slice{0, channels}}), n);
    const Array mean_of_squares = ops::div(totals.get_item({Slice{channels, 2 * channels}}), n);
    const Array var = ops::maximum(ops::sub(mean_of_squares, ops::square(mean)), ops::scalar_like(0.0, mean));
    mean_ = mean.astype(compute).reshape(cshape);
    var_ = var.astype(compute).reshape(cshape);
    inv_std_ = inverse_std(var_);
  }

  // Σgy and Σgy·x̂ over the whole batch, from this part's sums (one call of batch_sum for both).
  std::pair<Array, Array> whole_batch_sums(const Array& gbeta, const Array& ggamma) const {
    if (!batch_sum_) return {gbeta, ggamma};
    const int64_t channels = gbeta.size();
    const Array totals = sum_parts(batch_sum_, ops::concatenate({gbeta.reshape(Shape{channels}),
                                                                 ggamma.reshape(Shape{channels})}, 0));
    return {totals.get_item({Slice{0, channels}}).reshape(gbeta.shape()),
            totals.get_item({Slice{channels, 2 * channels}}).reshape(ggamma.shape())};
  }

  std::vector<Variable> fused_backward(const Array& gamma_in, const Array& gy_in, bool need_gx) {
    const Dtype compute = xhat_.dtype();
    const Array gy = gy_in.astype(compute);
    const std::vector<int64_t> axes = reduced_axes(gy.ndim());
    const Shape cshape = mean_.shape();
    const Array gbeta = ops::sum(gy, axes, true);
    const Array ggamma = ops::sum(ops::mul(gy, xhat_), axes, true);
    Variable gx;
    if (need_gx) {
      const auto [gbeta_all, ggamma_all] = whole_batch_sums(gbeta, ggamma);
      const Array m = ops::scalar_like(static_cast<double>(count_), gy);
      const Array coefficient = ops::div(ops::mul(gamma_in.astype(compute).reshape(cshape), inv_std_), m);
      gx = Variable(ops::mul(coefficient, ops::sub(ops::sub(ops::mul(gy, m), gbeta_all), ops::mul(xhat_, ggamma_all)))
                        .astype(inputs()[0]->dtype),
                    false);
    }
    return {gx, Variable(ggamma.reshape(inputs()[1]->shape).astype(inputs()[1]->dtype), false),
            Variable(gbeta.reshape(inputs()[2]->shape).astype(inputs()[2]->dtype), false)};
  }

  // The same gradients as differentiable functions of (x, gamma, gy) (and of the other parts' x and
  // gy through batch_sum).
  std::vector<Variable> recorded_backward(const std::vector<Variable>& retained, const Variable& gy_in) {
    const Dtype compute = xhat_.dtype();
    const Variable x = cast(retained[0], compute), gamma = cast(retained[1], compute);
    const Variable gy = cast(gy_in, compute);
    const Shape cshape = mean_.shape();
    const double m = static_cast<double>(count_);
    const auto whole = [this](const Variable& v) { return batch_sum_ ? batch_sum_(v) : v; };
    const Variable mean = whole(sum_to(x, cshape)) / m;
    const Variable centered = x - broadcast_to(mean, x.shape());
    const Variable var = whole(sum_to(square(centered), cshape)) / m;
    const Variable inv_std = pow(var + eps_, -0.5);
    const Variable xhat = centered * broadcast_to(inv_std, x.shape());
    const Variable gbeta = sum_to(gy, cshape);
    const Variable ggamma = sum_to(gy * xhat, cshape);
    const Variable gamma_b = broadcast_to(reshape(gamma, cshape), x.shape());
    const Variable coefficient = gamma_b * broadcast_to(inv_std, x.shape()) / m;
    const Variable gx = coefficient * (gy * m - broadcast_to(whole(gbeta), x.shape()) -
                                       xhat * broadcast_to(whole(ggamma), x.shape()));
    return {cast(gx, inputs()[0]->dtype), cast(reshape(ggamma, inputs()[1]->shape), inputs()[1]->dtype),
            cast(reshape(gbeta, inputs()[2]->shape), inputs()[2]->dtype)};
  }

  double eps_;
  BatchSum batch_sum_;
  int64_t count_ = 0;
  Array mean_, var_, inv_std_, xhat_;
};

BatchNormalizationResult apply_batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                                   double eps, BatchSum batch_sum) {
  auto node = std::make_shared<BatchNormalization>(eps, std::move(batch_sum));
  Variable y = node->apply({x, gamma, beta})[0];
  return {y, node->mean(), node->var(), node->count()};
}

}  // namespace

BatchNormalizationResult batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                             double eps) {
  check_arguments(x, {&gamma, &beta}, "batch_normalization");
  if (x.size() / x.shape()[1] < 2 && x.size() > 0) {
    throw ShapeError(cat("batch_normalization: expected more than one value per channel in training mode, got input ",
                         x.shape()));
  }
  return apply_batch_normalization(x, gamma, beta, eps, nullptr);
}

BatchNormalizationResult split_batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                                   const BatchSum& batch_sum, double eps) {
  check_arguments(x, {&gamma, &beta}, "split_batch_normalization");
  if (!batch_sum) throw ValueError("split_batch_normalization: expected a batch_sum function, got an empty one");
  return apply_batch_normalization(x, gamma, beta, eps, batch_sum);
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
