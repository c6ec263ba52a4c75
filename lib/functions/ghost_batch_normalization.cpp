#include <kusari/functions/ghost_batch_normalization.h>

#include <algorithm>
#include <vector>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/functions/arithmetic.h>
#include <kusari/functions/detail/batch_normalization.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/cast.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/math.h>
#include <kusari/functions/reshape_transpose.h>
#include <kusari/kernels/layer_routines.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

using detail::statistics_dtype;

// x's shape with axis 0 split into (groups, N / groups): (G, n, C, ...).
Shape grouped_shape(const Shape& x, int64_t groups) {
  std::vector<int64_t> dims{groups, x[0] / groups};
  for (int64_t i = 1; i < x.ndim(); ++i) dims.push_back(x[i]);
  return Shape(std::move(dims));
}

// (G, 1, C, 1, ...) for a grouped shape, or (1, 1, C, 1, ...) with `groups` 1.
Shape group_channel_shape(const Shape& grouped, int64_t groups) {
  std::vector<int64_t> dims(static_cast<size_t>(grouped.ndim()), 1);
  dims[0] = groups;
  dims[2] = grouped[2];
  return Shape(std::move(dims));
}

// Per-group batch normalization of x (input 0) with gamma, beta (inputs 1, 2) and an optional residual
// (input 3), then the activation. Forward: one group_channel_sums pass for every group's Σx and Σx²,
// then one group_channel_affine pass; the first-order backward likewise (only x and gamma are kept);
// a recorded backward (double backprop) is rebuilt from differentiable functions on x seen as
// (G, n, C, ...).
class GhostBatchNormalization final : public detail::BatchNormalizationNode {
 public:
  GhostBatchNormalization(int64_t groups, double eps, Activation activation)
      : BatchNormalizationNode(activation), groups_(groups), eps_(eps) {}
  std::string label() const override { return "GhostBatchNormalization"; }

  std::vector<Array> forward(const std::vector<Array>& in) override {
    const Array& x = in[0];
    const int64_t channels = x.shape()[1];
    const int64_t count = x.size() / std::max<int64_t>(1, groups_ * channels);
    const auto [sum, square_sum] = ops::group_channel_sums(x, x, groups_);
    statistics_ = ops::batch_norm_statistics_of_sums(sum, square_sum, count, eps_, in[1], in[2]);
    scale_ = statistics_.scale;
    shift_ = statistics_.shift;
    retain_inputs({0, 1});
    const bool relu = activation_ == Activation::relu;
    if (in.size() < 4) return {ops::group_channel_affine(x, scale_, Array(), Array(), shift_, groups_, {}, relu)};
    prepare_residual(scale_.shape(), x.device());
    return {ops::group_channel_affine(x, scale_, in[3], ones_, shift_, groups_, {}, relu)};
  }

  // The groups' statistics of the last forward, shape (G, C), float64.
  const Array& group_mean() const { return statistics_.mean; }
  const Array& group_var() const { return statistics_.var; }
  // Elements per channel of one group.
  int64_t group_count() const { return statistics_.count; }

 private:
  // Per group g: gx = a_g·gy + b_g·x + d_g from the group's Σgy and Σgy·x (one pass for all groups)
  // and one affine pass; gamma's and beta's gradients sum the groups' shares.
  std::vector<Variable> fused_backward(const Array& x, const Array& gamma, const Array& gy, bool need_gx) override {
    const ChannelGate gate = relu_gate(x);
    const auto [gy_sum, gy_x_sum] = ops::group_channel_sums(gy, x, groups_, gate);
    const BatchNormCoefficients c =
        ops::batch_norm_backward_coefficients(gy_sum, gy_x_sum, statistics_, gamma, need_gx);
    Variable gx;
    if (need_gx) gx = Variable(ops::group_channel_affine(gy, c.a, x, c.b, c.d, groups_, gate), false);
    const Array ggamma = ops::sum(c.ggamma, {0}), gbeta = ops::sum(gy_sum, {0});
    return {gx, Variable(ggamma.reshape(inputs()[1]->shape).astype(inputs()[1]->dtype), false),
            Variable(gbeta.reshape(inputs()[2]->shape).astype(inputs()[2]->dtype), false)};
  }

  // The same gradients as differentiable functions of (x, gamma, gy), x seen as (G, n, C, ...).
  std::vector<Variable> recorded_backward(const std::vector<Variable>& retained, const Variable& gy_in) override {
    const Dtype compute = statistics_dtype(retained[0].dtype());
    const Shape& shape = retained[0].shape();
    const Shape grouped = grouped_shape(shape, groups_);
    const Shape per_group = group_channel_shape(grouped, groups_), per_channel = group_channel_shape(grouped, 1);
    const auto spread = [&grouped](const Variable& v) { return broadcast_to(v, grouped); };
    const double m = static_cast<double>(statistics_.count);
    const Variable x = reshape(cast(retained[0], compute), grouped);
    const Variable gamma = reshape(cast(retained[1], compute), per_channel);
    const Variable mean = sum_to(x, per_group) / m;
    const Variable centered = x - spread(mean);
    const Variable inv_std = pow(sum_to(square(centered), per_group) / m + eps_, -0.5);
    const Variable xhat = centered * spread(inv_std);
    Variable gy = reshape(cast(gy_in, compute), grouped);
    if (activation_ == Activation::relu) gy = gy * reshape(relu_mask(gy.data()), grouped);
    const Variable gbeta = sum_to(gy, per_group);
    const Variable ggamma = sum_to(gy * xhat, per_group);
    const Variable coefficient = spread(gamma) * spread(inv_std) / m;
    const Variable gx = coefficient * (gy * m - spread(gbeta) - xhat * spread(ggamma));
    return {cast(reshape(gx, shape), inputs()[0]->dtype),
            cast(reshape(sum_to(ggamma, per_channel), inputs()[1]->shape), inputs()[1]->dtype),
            cast(reshape(sum_to(gbeta, per_channel), inputs()[2]->shape), inputs()[2]->dtype)};
  }

  // scale_g·x + shift_g per group g.
  Array pre_activation(const Array& x) const override {
    return ops::group_channel_affine(x, scale_, Array(), Array(), shift_, groups_);
  }

  int64_t groups_;
  double eps_;
  // The groups' statistics, float64 (G, C), count elements a group's channel; scale_, shift_ (and ones_,
  // zeros_) are (G, C) too.
  BatchNormStatistics statistics_;
};

// Throws unless x is a floating (N, C, ...) input with (C,) floating gamma and beta and group_size >= 1.
void check_arguments(const Variable& x, const Variable& gamma, const Variable& beta, int64_t group_size) {
  const char* op = "ghost_batch_normalization";
  if (group_size < 1) throw ValueError(cat(op, ": expected a group size >= 1, got ", group_size));
  if (x.ndim() < 2) throw ShapeError(cat(op, ": expected an input of shape (N, C, ...), got ", x.shape()));
  if (!is_floating(x.dtype())) throw DtypeError(cat(op, ": expected a floating input, got ", x.dtype()));
  for (const Variable* v : {&gamma, &beta}) {
    if (v->shape() != Shape{x.shape()[1]}) {
      throw ShapeError(cat(op, ": expected per-channel parameters of shape (", x.shape()[1], ",) for input ",
                           x.shape(), ", got ", v->shape()));
    }
    if (!is_floating(v->dtype())) throw DtypeError(cat(op, ": expected floating parameters, got ", v->dtype()));
  }
  const int64_t n = x.shape()[0];
  if (n > group_size && n % group_size != 0) {
    throw ShapeError(cat(op, ": expected a batch size N <= the group size or a multiple of it, got N = ", n,
                         " and group size ", group_size));
  }
}

// The whole batch's result from batch_normalization's (the batch is one group).
GhostBatchNormalizationResult one_group(BatchNormalizationResult whole) {
  const Shape row{1, whole.mean.size()};
  return {whole, whole.mean.reshape(row), whole.var.reshape(row), whole.count};
}

}  // namespace

GhostBatchNormalizationResult ghost_batch_normalization(const Variable& x, const Variable& gamma,
                                                        const Variable& beta, int64_t group_size, double eps,
                                                        Activation activation, const Variable& residual) {
  check_arguments(x, gamma, beta, group_size);
  if (x.shape()[0] <= group_size) return one_group(batch_normalization(x, gamma, beta, eps, activation, residual));
  const char* op = "ghost_batch_normalization";
  const int64_t groups = x.shape()[0] / group_size;
  if (x.size() / (groups * x.shape()[1]) < 2 && x.size() > 0) {
    throw ShapeError(cat(op, ": expected more than one value per channel in each group, got input ", x.shape(),
                         " in groups of ", group_size));
  }
  const std::vector<Variable> inputs = detail::node_inputs(x, gamma, beta, residual, op);
  auto node = std::allocate_shared<GhostBatchNormalization>(PoolAllocator<GhostBatchNormalization>(), groups, eps,
                                                            activation);
  GhostBatchNormalizationResult result;
  result.y = node->apply(inputs)[0];
  const Dtype stats = statistics_dtype(x.dtype());
  const Array& group_mean = node->group_mean();
  const Array mean = ops::mean(group_mean, {0});
  const Array second_moment = ops::mean(ops::add(node->group_var(), ops::square(group_mean)), {0});
  result.mean = mean.astype(stats);
  result.var = ops::maximum(ops::sub(second_moment, ops::square(mean)), ops::scalar_like(0.0, mean)).astype(stats);
  result.count = node->group_count() * groups;
  result.group_mean = group_mean.astype(stats);
  result.group_var = node->group_var().astype(stats);
  result.group_count = node->group_count();
  return result;
}

}  // namespace kusari::functions
