#pragma once
// Batch normalization over every axis but the channel axis (axis 1), for (N, C) and (N, C, H, W) inputs.

#include <kusari/autograd/variable.h>

namespace kusari::functions {

// What batch_normalization returns: the output and the batch statistics the link folds into its
// running averages.
struct BatchNormalizationResult {
  Variable y;        // gamma * (x - mean) / sqrt(var + eps) + beta
  Array mean;        // per-channel batch mean, shape (C,), float32 (float64 for float64 input)
  Array var;         // per-channel biased batch variance, shape (C,)
  int64_t count = 0; // elements per channel (N * H * W): the unbiased variance is var * count / (count - 1)
};

// Normalises x with its own batch statistics (training mode). gamma and beta have shape (C,). Half
// precision inputs are normalised in float32 and the output is cast back.
BatchNormalizationResult batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                             double eps = 2e-5);
// Normalises x with given statistics (evaluation mode); every argument is differentiable.
Variable fixed_batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                   const Variable& mean, const Variable& var, double eps = 2e-5);

}  // namespace kusari::functions
