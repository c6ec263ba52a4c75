#include <kusari/functions/normalization.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/functions/arithmetic.h>
#include <kusari/functions/detail/batch_normalization.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/cast.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/math.h>
#include <kusari/functions/reshape_transpose.h>
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

// Sums per-channel arrays over the parts of a split batch (arrays in, arrays out, nothing recorded).
Array sum_parts(const BatchSum& batch_sum, const Array& array) { return batch_sum(Variable(array, false)).data(); }

// Training-mode batch normalization, optionally plus a residual (input 3) and followed by a ReLU.
// Forward and the first-order backward are fused array code (two passes each: per-channel sums, then one
// per-channel affine map; only x and gamma are kept, the ReLU's mask is recomputed from x, or read from
// the output when a residual was added); when the backward itself is being recorded (double backprop)
// it is rebuilt from differentiable functions.
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
    count_ = x.size() / std::max<int64_t>(1, x.shape()[1]);
    auto [sum, square_sum] = ops::channel_sums(x, x);
    if (batch_sum_) std::tie(sum, square_sum) = split_totals(sum, square_sum);
    const Array n = ops::scalar_like(static_cast<double>(std::max<int64_t>(count_, 1)), sum);
    mean_ = ops::div(sum, n);
    var_ = ops::maximum(ops::sub(ops::div(square_sum, n), ops::square(mean_)), ops::scalar_like(0.0, mean_));
    inv_std_ = ops::reciprocal(ops::sqrt(ops::add(var_, ops::scalar_like(eps_, var_))));
    scale_ = ops::mul(in[1].astype(Dtype::float64), inv_std_);
    shift_ = ops::sub(in[2].astype(Dtype::float64), ops::mul(mean_, scale_));
    retain_inputs({0, 1});
    const bool relu = activation_ == Activation::relu;
    if (in.size() < 4) return {ops::channel_affine(x, scale_, Array(), Array(), shift_, {}, relu)};
    prepare_residual(Shape{x.shape()[1]}, x.device());
    return {ops::channel_affine(x, scale_, in[3], ones_, shift_, {}, relu)};
  }

  // The statistics of the last forward, shape (C,), in the statistics dtype.
  Array mean() const { return mean_.astype(statistics_dtype_); }
  Array var() const { return var_.astype(statistics_dtype_); }
  int64_t count() const { return count_; }

 private:
  // [Σx, Σx²] of the whole split batch from this part's (float64, shape (C,)), with one call of
  // batch_sum on [Σx, Σx², count, 1, d, d²] (d: this part's statistics dtype as a number, so that the
  // same sum tells whether every part computes in one dtype, as backward's sums need: with n parts,
  // n·Σd² = (Σd)² only when all d are equal); count_ becomes the whole batch's.
  std::pair<Array, Array> split_totals(const Array& sum, const Array& square_sum) {
    const int64_t channels = sum.size();
    const double dtype_code = static_cast<double>(statistics_dtype_) + 1;
    const Array tail = Array::from_vector(
        std::vector<double>{static_cast<double>(count_), 1, dtype_code, dtype_code * dtype_code}, {4}, {}, sum.device());
    const Array totals = sum_parts(batch_sum_, ops::concatenate({sum, square_sum, tail}, 0));
    const auto total = [&](int64_t i) { return totals.get_item({2 * channels + i}).item<double>(); };
    if (total(1) * total(3) != total(2) * total(2)) {
      throw DtypeError(cat("split_batch_normalization: expected every part of the batch to compute its statistics in ",
                           statistics_dtype_, " as this part does (float16, bfloat16 and float32 inputs in float32, "
                           "float64 inputs in float64), got parts that differ"));
    }
    count_ = static_cast<int64_t>(total(0));
    if (count_ < 2) {
      throw ShapeError(cat("batch_normalization: expected more than one value per channel in training mode over "
                           "all parts of the batch, got ", count_));
    }
    return {totals.get_item({Slice{0, channels}}), totals.get_item({Slice{channels, 2 * channels}})};
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

  // gx = a·gy + b·x + d per channel, from Σgy and Σgy·x (one pass) and one affine pass.
  std::vector<Variable> fused_backward(const Array& x, const Array& gamma, const Array& gy, bool need_gx) override {
    const ChannelGate relu_mask = relu_gate(x);
    const auto [gy_sum, gy_x_sum] = ops::channel_sums(gy, x, relu_mask);
    const Array gbeta = gy_sum;
    const Array ggamma = ops::mul(inv_std_, ops::sub(gy_x_sum, ops::mul(mean_, gy_sum)));
    Variable gx;
    if (need_gx) {
      const auto [gbeta_all, ggamma_all] = whole_batch_sums(gbeta, ggamma);
      const Array m = ops::scalar_like(static_cast<double>(count_), gbeta);
      const Array a = ops::mul(gamma.astype(Dtype::float64), inv_std_);
      const Array b = ops::neg(ops::div(ops::mul(ops::mul(a, ggamma_all), inv_std_), m));
      const Array d = ops::sub(ops::neg(ops::div(ops::mul(a, gbeta_all), m)), ops::mul(b, mean_));
      gx = Variable(ops::channel_affine(gy, a, x, b, d, relu_mask), false);
    }
    return {gx, Variable(ggamma.reshape(inputs()[1]->shape).astype(inputs()[1]->dtype), false),
            Variable(gbeta.reshape(inputs()[2]->shape).astype(inputs()[2]->dtype), false)};
  }

  // The same gradients as differentiable functions of (x, gamma, gy) (and of the other parts' x and
  // gy through batch_sum).
  std::vector<Variable> recorded_backward(const std::vector<Variable>& retained, const Variable& gy_in) override {
    const Dtype compute = statistics_dtype(retained[0].dtype());
    const Variable x = cast(retained[0], compute), gamma = cast(retained[1], compute);
    const Shape cshape = channel_shape(x.shape(), x.shape()[1]);
    const double m = static_cast<double>(count_);
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
  int64_t count_ = 0;
  Dtype statistics_dtype_ = Dtype::float32;
  Array mean_, var_, inv_std_;  // float64, shape (C,); scale_, shift_ (and ones_, zeros_) are (C,) too
};

BatchNormalizationResult apply_batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                                   double eps, BatchSum batch_sum, Activation activation,
                                                   const Variable& residual, const char* op) {
  const std::vector<Variable> inputs = detail::node_inputs(x, gamma, beta, residual, op);
  auto node = std::allocate_shared<BatchNormalization>(PoolAllocator<BatchNormalization>(), eps, std::move(batch_sum),
                                                       activation);
  Variable y = node->apply(inputs)[0];
  return {y, node->mean(), node->var(), node->count()};
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
