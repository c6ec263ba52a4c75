// The batch normalization routines of layer_routines.h: operand checks, then the device's kernel for a
// whole batch, or the two passes of batch_norm_passes.h (channel sums and affine maps) for a split one.

#include <algorithm>
#include <initializer_list>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/detail/batch_norm_passes.h>
#include <kusari/kernels/detail/operand_checks.h>
#include <kusari/kernels/routines.h>

namespace kusari::ops {
namespace {

// Throws unless x is a floating (N, C, ...) array, each per-channel operand a floating (C,) array on
// x's device, and `like_x` (when defined) of x's shape and dtype on its device.
void check_operands(const Array& x, std::initializer_list<const Array*> per_channel, const Array& like_x,
                    const char* op) {
  if (!x.defined()) throw ValueError(cat(op, ": the input is undefined"));
  if (x.ndim() < 2) throw ShapeError(cat(op, ": expected an input of shape (N, C, ...), got ", x.shape()));
  if (!is_floating(x.dtype())) throw DtypeError(cat(op, ": expected a floating input, got ", x.dtype()));
  for (const Array* a : per_channel) {
    detail::require_same_device(x, *a, op);
    if (a->shape() != Shape{x.shape()[1]}) {
      throw ShapeError(cat(op, ": expected per-channel operands of shape (", x.shape()[1], ",), got ", a->shape()));
    }
    if (!is_floating(a->dtype())) {
      throw DtypeError(cat(op, ": expected floating per-channel operands, got ", a->dtype()));
    }
  }
  if (!like_x.defined()) return;
  detail::require_same_device(x, like_x, op);
  if (like_x.shape() != x.shape() || like_x.dtype() != x.dtype()) {
    throw ShapeError(cat(op, ": expected an operand of the input's shape ", x.shape(), " and dtype ", x.dtype(),
                         ", got ", like_x.shape(), " and ", like_x.dtype()));
  }
}

// Per-channel float64 sums (of shape (C,) or (G, C), C gamma's size) as a contiguous array; throws unless
// they are floating sums of that shape.
Array per_channel_sums(const Array& sums, const Array& gamma, const char* op) {
  if (!gamma.defined()) throw ValueError(cat(op, ": gamma is undefined"));
  if (!sums.defined()) throw ValueError(cat(op, ": a per-channel operand is undefined"));
  const int64_t channels = gamma.size();
  if ((sums.ndim() != 1 && sums.ndim() != 2) || sums.shape()[sums.ndim() - 1] != channels) {
    throw ShapeError(cat(op, ": expected per-channel sums of shape (", channels, ",) or (G, ", channels, "), got ",
                         sums.shape()));
  }
  if (!is_floating(sums.dtype())) throw DtypeError(cat(op, ": expected floating sums, got ", sums.dtype()));
  return sums.astype(Dtype::float64).contiguous();
}

// Throws unless each parameter is a floating (C,) array on the device of `sums` (of shape (C,) or (G, C)).
void check_parameters(std::initializer_list<const Array*> parameters, const Array& sums, const char* op) {
  const Shape expected{sums.shape()[sums.ndim() - 1]};
  for (const Array* p : parameters) {
    if (!p->defined()) throw ValueError(cat(op, ": a per-channel parameter is undefined"));
    detail::require_same_device(sums, *p, op);
    if (p->shape() != expected) {
      throw ShapeError(cat(op, ": expected per-channel parameters of shape ", expected, ", got ", p->shape()));
    }
    if (!is_floating(p->dtype())) {
      throw DtypeError(cat(op, ": expected floating per-channel parameters, got ", p->dtype()));
    }
  }
}

// Throws unless b has a's shape and device.
void check_alike(const Array& a, const Array& b, const char* op) {
  detail::require_same_device(a, b, op);
  if (a.shape() != b.shape()) {
    throw ShapeError(cat(op, ": expected per-channel operands of one shape, got ", a.shape(), " and ", b.shape()));
  }
}

// A new contiguous float64 array of like's shape on its device.
Array float64_like(const Array& like) { return Array::empty(like.shape(), Dtype::float64, like.device()); }

// Per-channel float64 ones of x's channels on its device.
Array channel_ones(const Array& x) { return Array::ones(Shape{x.shape()[1]}, Dtype::float64, x.device()); }

// part_sum of `part`, checked to keep its shape.
Array summed_over_parts(const Array& part, const PartSum& part_sum) {
  Array totals = part_sum(part);
  if (!totals.defined() || totals.shape() != part.shape()) {
    throw ShapeError(cat("split_batch_normalization: expected the part sum to return shape ", part.shape(), ", got ",
                         totals.defined() ? cat(totals.shape()) : std::string("an undefined array")));
  }
  return totals;
}

// [Σx, Σx²] and the count of the whole split batch, from this part's (see batch_normalization_in_passes).
std::tuple<Array, Array, int64_t> whole_batch_totals(const Array& sum, const Array& square_sum, int64_t count,
                                                     Dtype statistics_dtype, const PartSum& part_sum) {
  const int64_t channels = sum.size();
  const double dtype_code = static_cast<double>(statistics_dtype) + 1;
  const Array tail = Array::from_vector(
      std::vector<double>{static_cast<double>(count), 1, dtype_code, dtype_code * dtype_code}, {4}, {}, sum.device());
  const Array totals = summed_over_parts(concatenate({sum, square_sum, tail}, 0), part_sum);
  const std::vector<double> t = totals.get_item({Slice{2 * channels, 2 * channels + 4}}).to_vector<double>();
  if (t[1] * t[3] != t[2] * t[2]) {
    throw DtypeError(cat("split_batch_normalization: expected every part of the batch to compute its statistics in ",
                         statistics_dtype, " as this part does (float16, bfloat16 and float32 inputs in float32, "
                         "float64 inputs in float64), got parts that differ"));
  }
  const auto whole_count = static_cast<int64_t>(t[0]);
  if (whole_count < 2) {
    throw ShapeError(cat("batch_normalization: expected more than one value per channel in training mode over "
                         "all parts of the batch, got ", whole_count));
  }
  return {totals.get_item({Slice{0, channels}}), totals.get_item({Slice{channels, 2 * channels}}), whole_count};
}

// Where a ReLU passed gradients: pre = scale·x + shift > 0, or y > 0 when the forward added a residual.
ChannelGate relu_gate(const Array& x, const Array& y, const BatchNormStatistics& s, bool relu) {
  if (!relu) return {};
  if (!s.residual) return {x, s.scale, s.shift};
  return {y, channel_ones(x), Array::zeros(Shape{x.shape()[1]}, Dtype::float64, x.device())};
}

}  // namespace

namespace detail {

BatchNormForwardResult batch_normalization_in_passes(const Array& x, const Array& gamma, const Array& beta,
                                                     const Array& residual, double eps, bool relu,
                                                     const PartSum& part_sum) {
  BatchNormStatistics s;
  s.count = x.size() / std::max<int64_t>(1, x.shape()[1]);
  auto [sum, square_sum] = channel_sums(x, x);
  if (part_sum) {
    std::tie(sum, square_sum, s.count) =
        whole_batch_totals(sum, square_sum, s.count, batch_norm_statistics_dtype(x.dtype()), part_sum);
  }
  const int64_t count = s.count;
  s = batch_norm_statistics_of_sums(sum, square_sum, std::max<int64_t>(count, 1), eps, gamma, beta);
  s.count = count;
  s.residual = residual.defined();
  s.backward_reads_output = relu && s.residual;
  Array y = residual.defined() ? channel_affine(x, s.scale, residual, channel_ones(x), s.shift, {}, relu)
                               : channel_affine(x, s.scale, Array(), Array(), s.shift, {}, relu);
  return {std::move(y), std::move(s)};
}

BatchNormGradients batch_normalization_backward_in_passes(const Array& x, const Array& gamma, const Array& gy,
                                                          const Array& y, const BatchNormStatistics& s, bool relu,
                                                          bool need_gx, const PartSum& part_sum) {
  const ChannelGate gate = relu_gate(x, y, s, relu);
  const auto [gy_sum, gy_x_sum] = channel_sums(gy, x, gate);
  BatchNormCoefficients c = batch_norm_backward_coefficients(gy_sum, gy_x_sum, s, gamma, need_gx && !part_sum);
  BatchNormGradients g;
  g.gbeta = gy_sum;
  g.ggamma = c.ggamma;
  if (!need_gx) return g;
  if (part_sum) {
    const int64_t channels = g.gbeta.size();
    const Array totals = summed_over_parts(concatenate({g.gbeta, g.ggamma}, 0), part_sum);
    c = batch_norm_backward_coefficients(gy_sum, gy_x_sum, s, gamma, true, totals.get_item({Slice{0, channels}}),
                                         totals.get_item({Slice{channels, 2 * channels}}));
  }
  g.gx = channel_affine(gy, c.a, x, c.b, c.d, gate);
  return g;
}

BatchNormForwardResult batch_norm_forward_kernel(const Array& x, const Array& gamma, const Array& beta,
                                                 const Array& residual, double eps, bool relu) {
  return batch_normalization_in_passes(x, gamma, beta, residual, eps, relu, {});
}

BatchNormGradients batch_norm_backward_kernel(const Array& x, const Array& gamma, const Array& gy, const Array& y,
                                              const BatchNormStatistics& statistics, bool relu, bool need_gx) {
  return batch_normalization_backward_in_passes(x, gamma, gy, y, statistics, relu, need_gx, {});
}

}  // namespace detail

BatchNormStatistics batch_norm_statistics_of_sums(const Array& sums, const Array& square_sums, int64_t count,
                                                  double eps, const Array& gamma, const Array& beta) {
  const char* op = "batch_norm_statistics_of_sums";
  const Array sum = per_channel_sums(sums, gamma, op), square_sum = per_channel_sums(square_sums, gamma, op);
  check_alike(sum, square_sum, op);
  check_parameters({&gamma, &beta}, sum, op);
  BatchNormStatistics s;
  s.count = count;
  for (Array* a : {&s.mean, &s.var, &s.inv_std, &s.scale, &s.shift}) *a = float64_like(sum);
  kernel_for<kernel_ops::BatchNormStatisticsOfSums>(sum.device())(sum, square_sum, eps, gamma, beta, s);
  return s;
}

BatchNormCoefficients batch_norm_backward_coefficients(const Array& gy_sums, const Array& gy_x_sums,
                                                       const BatchNormStatistics& s, const Array& gamma, bool need_gx,
                                                       const Array& gbeta_total, const Array& ggamma_total) {
  const char* op = "batch_norm_backward_coefficients";
  const Array gy_sum = per_channel_sums(gy_sums, gamma, op), gy_x_sum = per_channel_sums(gy_x_sums, gamma, op);
  const Array mean = per_channel_sums(s.mean, gamma, op), inv_std = per_channel_sums(s.inv_std, gamma, op);
  check_alike(gy_sum, gy_x_sum, op);
  check_alike(gy_sum, mean, op);
  check_alike(gy_sum, inv_std, op);
  check_parameters({&gamma}, gy_sum, op);
  Array gbeta_all = gbeta_total, ggamma_all = ggamma_total;
  if (gbeta_all.defined() != ggamma_all.defined()) {
    throw ValueError(cat(op, ": expected both totals (gbeta's and ggamma's) or neither, got one"));
  }
  if (gbeta_all.defined()) {
    gbeta_all = per_channel_sums(gbeta_total, gamma, op);
    ggamma_all = per_channel_sums(ggamma_total, gamma, op);
    check_alike(gy_sum, gbeta_all, op);
    check_alike(gy_sum, ggamma_all, op);
  }
  BatchNormCoefficients c;
  c.ggamma = float64_like(gy_sum);
  if (need_gx) {
    for (Array* a : {&c.a, &c.b, &c.d}) *a = float64_like(gy_sum);
  }
  BatchNormStatistics statistics;
  statistics.mean = mean;
  statistics.inv_std = inv_std;
  statistics.count = s.count;
  kernel_for<kernel_ops::BatchNormBackwardCoefficients>(gy_sum.device())(
      gy_sum, gy_x_sum, statistics, gamma, gbeta_all, ggamma_all, c.ggamma, c.a, c.b, c.d);
  return c;
}

void batch_norm_running_averages(const Array& mean, const Array& var, double decay, double mean_share,
                                 double var_share, const Array& average_mean, const Array& average_var) {
  const char* op = "batch_norm_running_averages";
  for (const Array* a : {&mean, &var, &average_mean, &average_var}) {
    if (!a->defined()) throw ValueError(cat(op, ": an operand is undefined"));
  }
  check_alike(average_mean, average_var, op);
  check_alike(average_mean, mean, op);
  check_alike(average_mean, var, op);
  if (average_mean.ndim() != 1) {
    throw ShapeError(cat(op, ": expected per-channel operands of shape (C,), got ", average_mean.shape()));
  }
  const auto single_or_double = [](Dtype d) { return d == Dtype::float32 || d == Dtype::float64; };
  if (!single_or_double(average_mean.dtype()) || average_var.dtype() != average_mean.dtype()) {
    throw DtypeError(cat(op, ": expected running averages of one dtype, float32 or float64, got ",
                         average_mean.dtype(), " and ", average_var.dtype()));
  }
  if (!single_or_double(mean.dtype()) || var.dtype() != mean.dtype()) {
    throw DtypeError(cat(op, ": expected a batch mean and variance of one dtype, float32 or float64, got ",
                         mean.dtype(), " and ", var.dtype()));
  }
  for (const auto& [average, name] : {std::pair{&average_mean, "mean"}, std::pair{&average_var, "variance"}}) {
    if (!average->is_contiguous()) {
      throw ValueError(cat(op, ": expected contiguous running averages (they are updated in place), got a "
                               "non-contiguous view as the running ", name));
    }
  }
  kernel_for<kernel_ops::BatchNormRunningAverages>(mean.device())(mean.contiguous(), var.contiguous(), decay,
                                                                  mean_share, var_share, average_mean, average_var);
}

BatchNormForwardResult batch_normalization(const Array& x, const Array& gamma, const Array& beta,
                                           const Array& residual, double eps, bool relu, const PartSum& part_sum) {
  check_operands(x, {&gamma, &beta}, residual, part_sum ? "split_batch_normalization" : "batch_normalization");
  if (part_sum) return detail::batch_normalization_in_passes(x, gamma, beta, residual, eps, relu, part_sum);
  return kernel_for<kernel_ops::BatchNormForward>(x.device())(x, gamma, beta, residual, eps, relu);
}

BatchNormGradients batch_normalization_backward(const Array& x, const Array& gamma, const Array& gy, const Array& y,
                                                const BatchNormStatistics& statistics, bool relu, bool need_gx,
                                                const PartSum& part_sum) {
  const char* op = "batch_normalization_backward";
  check_operands(x, {&gamma, &statistics.mean, &statistics.inv_std, &statistics.scale, &statistics.shift}, gy, op);
  if (relu && statistics.backward_reads_output && !y.defined()) {
    throw ValueError(cat(op, ": expected the forward's output y (",
                         statistics.residual ? "its ReLU followed a residual" : "the device's backward reads it",
                         "), got none"));
  }
  if (y.defined()) check_operands(x, {}, y, op);
  if (part_sum) {
    return detail::batch_normalization_backward_in_passes(x, gamma, gy, y, statistics, relu, need_gx, part_sum);
  }
  return kernel_for<kernel_ops::BatchNormBackward>(x.device())(x, gamma, gy, y, statistics, relu, need_gx);
}

}  // namespace kusari::ops
