#pragma once
// Ghost batch normalization (Hoffer et al. 2017): batch normalization whose statistics are those of
// consecutive groups of the batch's examples rather than of the whole batch.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/functions/normalization.h>

namespace kusari::functions {

// What ghost_batch_normalization returns: the BatchNormalizationResult of the whole local batch
// (mean = E[x], var = the biased Var[x], count = elements per channel of the batch, as if it were
// one group) plus each group's own statistics.
struct KUSARI_API GhostBatchNormalizationResult : BatchNormalizationResult {
  Array group_mean;         // per-group, per-channel mean, shape (G, C), in the statistics dtype
  Array group_var;          // per-group, per-channel biased variance, shape (G, C)
  int64_t group_count = 0;  // elements per channel of one group (group_size * H * W)
};

// Training-mode batch normalization of x (N, C, ...) in which group g, the examples [g*group_size,
// (g+1)*group_size) of axis 0, is normalised with its own mean and biased variance; when N <=
// group_size the whole batch is one group (batch_normalization), otherwise N must be a multiple of
// group_size (ShapeError otherwise). The activation and residual work as in batch_normalization, for
// the same dtypes and memory orders; forward and backward are each one pass of sums and one affine
// pass over the whole batch, and the backward is differentiable (double backprop). The batch's mean
// is the mean of the groups' means, its variance the mean over groups of var_g + mean_g² minus mean².
KUSARI_API GhostBatchNormalizationResult ghost_batch_normalization(const Variable& x, const Variable& gamma,
                                                                   const Variable& beta, int64_t group_size,
                                                                   double eps = 2e-5, Activation activation = Activation::none,
                                                                   const Variable& residual = Variable());

}  // namespace kusari::functions
