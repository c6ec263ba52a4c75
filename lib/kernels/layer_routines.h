#pragma once
// Device-independent routines of the layers (no autograd): convolution, pooling, batch normalization,
// softmax cross-entropy and random draws. Each checks its operands (one device, one dtype, the shapes fitting), then calls the
// kernel registered for their device, which allocates its outputs in the order that device prefers.

#include <cstdint>
#include <functional>
#include <utility>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/kernels/ops/convolution.h>
#include <kusari/kernels/ops/kernel_state.h>
#include <kusari/kernels/ops/loss.h>
#include <kusari/kernels/ops/normalization.h>
#include <kusari/kernels/ops/pooling.h>
#include <kusari/kernels/ops/random.h>

namespace kusari::ops {

// y (N, O, oh, ow) = x (N, C, H, W) correlated with w (O, C/groups, kh, kw), plus b (O) when defined;
// oh and ow are y_shape's.
KUSARI_API Array convolution_2d(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& geometry,
                                const Shape& y_shape);
// The transposed convolution of x (N, O, h, w) with w (O, C/groups, kh, kw), plus b (C) when defined, of
// y_shape (N, C, H, W): convolution_2d's gradient in its input, and the forward of a deconvolution.
KUSARI_API Array convolution_2d_backward_data(const Array& x, const Array& w, const Array& b,
                                              const Conv2dGeometry& geometry, const Shape& y_shape);
// The filter gradient (w_shape) of the convolution of x (N, C, H, W) that gave gy (N, O, oh, ow).
KUSARI_API Array convolution_2d_backward_filter(const Array& x, const Array& gy, const Conv2dGeometry& geometry,
                                                const Shape& w_shape);

// Window maxima of x (N, C, H, W) of y_shape, with the backend's record of the winners.
KUSARI_API MaxPool2dResult max_pooling_2d(const Array& x, const Pool2dGeometry& geometry, const Shape& y_shape);
// gx of x_shape: gy added at each window's winner (max_pooling_2d's gradient).
KUSARI_API Array max_pooling_2d_scatter(const Array& gy, const KernelState& winners, const Shape& x_shape);
// x at each window's winner, of the pooled output's shape (the scatter's adjoint).
KUSARI_API Array max_pooling_2d_gather(const Array& x, const KernelState& winners);
// Window means of x (N, C, H, W) of y_shape, the padding counted as zeros.
KUSARI_API Array average_pooling_2d(const Array& x, const Pool2dGeometry& geometry, const Shape& y_shape);
// gx of x_shape: average_pooling_2d's adjoint.
KUSARI_API Array average_pooling_2d_backward(const Array& gy, const Pool2dGeometry& geometry, const Shape& x_shape);

// Sums a float64 1-D array over every part of a batch split across processes (kusari::distributed passes
// an all-reduce); every part must call it in step.
using PartSum = std::function<Array(const Array&)>;

// Training-mode batch normalization of x (N, C, ...) with gamma and beta (C,), plus residual when defined,
// then the ReLU when relu: the device's BatchNormForward kernel. With part_sum, x is one part of a split
// batch and the statistics (and count) are every part's together, from one part_sum call on this part's
// sums (which also checks that every part computes its statistics in one dtype).
KUSARI_API BatchNormForwardResult batch_normalization(const Array& x, const Array& gamma, const Array& beta,
                                                      const Array& residual, double eps, bool relu,
                                                      const PartSum& part_sum = {});
// batch_normalization's gradients given gy and its statistics (y: its output, needed when it added a
// residual before the ReLU; ValueError without it). With part_sum, gx uses the whole batch's gradient sums
// (one part_sum call); ggamma and gbeta are this part's share. Every part must pass the same checks, or
// the others wait in part_sum.
KUSARI_API BatchNormGradients batch_normalization_backward(const Array& x, const Array& gamma, const Array& gy,
                                                           const Array& y, const BatchNormStatistics& statistics,
                                                           bool relu, bool need_gx, const PartSum& part_sum = {});

// Batch normalization's statistics of `count` elements a channel from their float64 sums Σx and Σx² (shape
// (C,), or (G, C) for G groups of samples) with gamma and beta (C,): the device's BatchNormStatisticsOfSums
// kernel (mean, var, inv_std, scale and shift of the sums' shape, and the count).
KUSARI_API BatchNormStatistics batch_norm_statistics_of_sums(const Array& sums, const Array& square_sums,
                                                             int64_t count, double eps, const Array& gamma,
                                                             const Array& beta);
// Gamma's gradient and, when need_gx, the data gradient's map from float64 sums Σgy and Σgy·x of the sums'
// shape in batch_norm_statistics_of_sums and the statistics s it gave: the device's
// BatchNormBackwardCoefficients kernel. The map takes the whole split batch's Σgy and gamma gradient where
// gbeta_total and ggamma_total are given, this batch's own otherwise.
KUSARI_API BatchNormCoefficients batch_norm_backward_coefficients(const Array& gy_sums, const Array& gy_x_sums,
                                                                  const BatchNormStatistics& s, const Array& gamma,
                                                                  bool need_gx, const Array& gbeta_total = {},
                                                                  const Array& ggamma_total = {});
// Folds a batch's statistics into batch normalization's running averages in place, one pass (the device's
// BatchNormRunningAverages kernel): average_mean = decay·average_mean + mean_share·mean and average_var =
// decay·average_var + var_share·var, mean and var (C,) float32 or float64 (one dtype), the averages
// contiguous (C,) float32 or float64 (one dtype), all on one device.
KUSARI_API void batch_norm_running_averages(const Array& mean, const Array& var, double decay, double mean_share,
                                            double var_share, const Array& average_mean, const Array& average_var);

// {loss, log_p}: each sample's cross entropy of softmax(x) against its target ((N,), or their mean () when
// targets.mean) and the log softmax of x (N, C), for labels t (N,) int32/int64 on x's device.
KUSARI_API std::pair<Array, Array> softmax_cross_entropy(const Array& x, const Array& t,
                                                         const CrossEntropyTargets& targets);
// The gradient in x of softmax_cross_entropy given its log_p, labels and the loss's gradient gy.
KUSARI_API Array softmax_cross_entropy_grad(const Array& log_p, const Array& t, const Array& gy,
                                            const CrossEntropyTargets& targets);

// Fills out with draws offset, offset + 1, ... of the counter-based stream `seed` (p0, p1: low and high,
// mean and stddev, or the probability of 1 and unused).
KUSARI_API void fill_random(const Array& out, Distribution distribution, uint64_t seed, uint64_t offset, double p0,
                            double p1);

}  // namespace kusari::ops
