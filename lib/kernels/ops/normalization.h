#pragma once
// Kernel contracts of batch normalization: the whole training-mode forward and backward of one batch
// (what cuDNN's batch normalization computes), and the two passes it is made of on the CPU and in a
// batch split across processes (per-channel sums, then a per-channel affine map).

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/core/channel_gate.h>
#include <kusari/kernels/ops/kernel_state.h>

namespace kusari {

// What a training-mode batch normalization computed, for its backward and the running averages: per
// channel (float64, (C,)) the batch's mean, biased variance and inv_std = 1/sqrt(var + eps), and the
// affine map applied before the activation, pre = scale·x + shift; count: elements per channel; state:
// whatever else the backend keeps from its forward (opaque, may be null).
struct KUSARI_API BatchNormStatistics {
  Array mean, var, inv_std, scale, shift;
  int64_t count = 0;
  bool residual = false;  // whether the forward added a residual (then a ReLU's gate reads its output)
  // Whether the backward reads the forward's output y: a ReLU's gate after a residual, or a backend's
  // fused backward of its ReLU (cuDNN's); the caller keeps y for it then.
  bool backward_reads_output = false;
  KernelStatePtr state;
};

// The dtype batch normalization reports its statistics in (and computes the recorded backward in):
// float64 for float64 inputs, float32 for every other floating dtype.
inline Dtype batch_norm_statistics_dtype(Dtype x) { return x == Dtype::float64 ? Dtype::float64 : Dtype::float32; }

// A training-mode batch normalization's output and its statistics.
struct KUSARI_API BatchNormForwardResult {
  Array y;
  BatchNormStatistics statistics;
};

// A batch normalization's gradients: gx (x's shape and dtype; undefined unless asked for), and gamma's
// and beta's as (C,) float64, or float32 where a backend computes them in float32 (cuDNN's).
struct KUSARI_API BatchNormGradients {
  Array gx, ggamma, gbeta;
};

// What a batch normalization's backward makes of its gradient sums, per channel (float64): gamma's
// gradient and the data gradient's map gx = a·gy + b·x + d (a, b and d undefined where gx is not asked for).
struct KUSARI_API BatchNormCoefficients {
  Array ggamma, a, b, d;
};

}  // namespace kusari

namespace kusari::kernel_ops {

// Training-mode batch normalization of (N, C, ...) floating x (every element of a channel over every
// axis but 1, statistics in float64): y = gamma·(x - mean)·inv_std + beta, plus residual when defined
// (x's shape, dtype and device), then max(y, 0) when relu; gamma and beta (C,) of any floating dtype. The
// kernel allocates y in the memory order its device prefers.
struct KUSARI_API BatchNormForward {
  static constexpr const char* name = "batch_norm_forward";
  using Fn = BatchNormForwardResult(const Array& x, const Array& gamma, const Array& beta, const Array& residual,
                                    double eps, bool relu);
};
// BatchNormForward's gradients given gy (x's shape and dtype) and the forward's statistics: ggamma = Σgy·x̂,
// gbeta = Σgy (gy passed through the ReLU's gate when relu), gx when need_gx. With relu, the gate is
// pre > 0 (pre recomputed from x), or y > 0 when the forward added a residual (y: its output, defined
// whenever statistics.backward_reads_output; may be undefined otherwise).
struct KUSARI_API BatchNormBackward {
  static constexpr const char* name = "batch_norm_backward";
  using Fn = BatchNormGradients(const Array& x, const Array& gamma, const Array& gy, const Array& y,
                                const BatchNormStatistics& statistics, bool relu, bool need_gx);
};

// Per group g of `groups` equal consecutive groups of the samples (axis 0) and channel c of (N, C, ...)
// arrays x and y of one shape, floating dtype and memory order (row-major, or with channel rows:
// has_channel_rows in core/memory_order.h; the gate's input too): sums[g, c] = Σ x and
// products[g, c] = Σ x·y over the group's samples and every axis but 1, x gated (by row g of the
// gate's scale and shift), accumulated into contiguous float64 (groups, C) (or (C,) for one group).
struct KUSARI_API ChannelSums {
  static constexpr const char* name = "channel_sums";
  using Fn = void(const Array& x, const Array& y, const ChannelGate& gate, int64_t groups, const Array& sums,
                  const Array& products);
};
// out = a[g, c]·x + b[g, c]·y + d[g, c] per group g (as for ChannelSums) and channel c of (N, C, ...)
// arrays of one dtype and memory order (as for ChannelSums; out too), x gated (y may be undefined, then b
// is too), then max(out, 0) when relu (NaN stays); a, b, d contiguous float64 (groups, C) (or (C,)).
struct KUSARI_API ChannelAffine {
  static constexpr const char* name = "channel_affine";
  using Fn = void(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                  const ChannelGate& gate, bool relu, int64_t groups, const Array& out);
};

// Batch normalization's statistics from float64 contiguous sums Σx and Σx² (shape (C,), or (G, C): one row
// per group of samples) of out.count elements each, per group and channel c: mean = Σx / count, var =
// max(Σx² / count - mean², 0), inv_std = 1 / sqrt(var + eps), scale = gamma[c]·inv_std and shift =
// beta[c] - mean·scale, each operation rounded apart (no fused multiply-add), into out's float64
// contiguous arrays of the sums' shape; gamma and beta (C,) floating.
struct KUSARI_API BatchNormStatisticsOfSums {
  static constexpr const char* name = "batch_norm_statistics_of_sums";
  using Fn = void(const Array& sums, const Array& square_sums, double eps, const Array& gamma, const Array& beta,
                  const BatchNormStatistics& out);
};
// Batch normalization's backward coefficients from float64 contiguous sums Σgy and Σgy·x (gy gated; shape
// (C,) or (G, C) as for BatchNormStatisticsOfSums) and the forward's statistics s (mean and inv_std of
// that shape, s.count elements each), per group and channel c, each operation rounded apart: ggamma =
// inv_std·(Σgy·x - mean·Σgy); and, where a is defined (b and d too), gx = a·gy + b·x + d with a =
// gamma[c]·inv_std, b = -(a·Gγ·inv_std) / count and d = -(a·Gβ) / count - b·mean, where Gβ and Gγ are
// gbeta_total and ggamma_total (the whole split batch's) or, undefined, this call's Σgy and ggamma. The
// outputs are float64 contiguous arrays of the sums' shape.
struct KUSARI_API BatchNormBackwardCoefficients {
  static constexpr const char* name = "batch_norm_backward_coefficients";
  using Fn = void(const Array& gy_sums, const Array& gy_x_sums, const BatchNormStatistics& s, const Array& gamma,
                  const Array& gbeta_total, const Array& ggamma_total, const Array& ggamma, const Array& a,
                  const Array& b, const Array& d);
};
// Batch normalization's running averages folded in place, per channel: average_mean = decay·average_mean +
// mean_share·mean and average_var = decay·average_var + var_share·var, the batch's mean and var
// (contiguous (C,) of one dtype, float32 or float64) first rounded to the averages' dtype (contiguous (C,),
// one dtype, float32 or float64), each product rounded apart (no fused multiply-add) and added in that dtype.
struct KUSARI_API BatchNormRunningAverages {
  static constexpr const char* name = "batch_norm_running_averages";
  using Fn = void(const Array& mean, const Array& var, double decay, double mean_share, double var_share,
                  const Array& average_mean, const Array& average_var);
};

}  // namespace kusari::kernel_ops
