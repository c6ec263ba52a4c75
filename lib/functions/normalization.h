#pragma once
// Batch normalization over every axis but the channel axis (axis 1), for (N, C) and (N, C, H, W) inputs.

#include <functional>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// What follows the normalisation inside the same node: nothing, or max(·, 0) (a ReLU fused into the
// normalisation's passes, forward and backward).
enum class Activation { none, relu };

// What batch_normalization returns: the output and the batch statistics the link folds into its
// running averages.
struct KUSARI_API BatchNormalizationResult {
  Variable y;        // gamma * (x - mean) / sqrt(var + eps) + beta (then the activation)
  Array mean;        // per-channel batch mean, shape (C,), float32 (float64 for float64 input)
  Array var;         // per-channel biased batch variance, shape (C,)
  int64_t count = 0; // elements per channel (N * H * W): the unbiased variance is var * count / (count - 1)
};

// Normalises x with its own batch statistics (training mode). gamma and beta have shape (C,). Half
// precision inputs are normalised in float32 and the output is cast back. A defined `residual` (x's
// shape and dtype) is added to the normalised x before the activation, in the same passes: the
// residual join of a ResNet block, relu(bn(x) + shortcut), without a separate sum.
KUSARI_API BatchNormalizationResult batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                                        double eps = 2e-5, Activation activation = Activation::none,
                                                        const Variable& residual = Variable());
// Sums a per-channel statistic over every part of a batch that is split across processes,
// differentiably (kusari::distributed passes an all-reduce).
using BatchSum = std::function<Variable(const Variable&)>;

// batch_normalization of a batch split across processes, x being this process's part: the
// statistics (and count) are those of all parts together, so unequal parts give exactly the whole
// batch's. Forward calls batch_sum once on [Σx, Σx², count] and three numbers that tell whether every
// part computes its statistics in one dtype (float64; DtypeError on every part otherwise), backward
// once on [Σgy, Σgy·x̂] (only when x needs a gradient); the gradients of gamma and beta are this part's
// share. Every process must call it, and backpropagate through it, in step.
KUSARI_API BatchNormalizationResult split_batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                                              const BatchSum& batch_sum, double eps = 2e-5,
                                                              Activation activation = Activation::none,
                                                              const Variable& residual = Variable());
// Normalises x with given statistics (evaluation mode); every argument is differentiable.
KUSARI_API Variable fixed_batch_normalization(const Variable& x, const Variable& gamma, const Variable& beta,
                                              const Variable& mean, const Variable& var, double eps = 2e-5);

}  // namespace kusari::functions
