#pragma once
// Loss functions.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// How a loss combines the per-sample values.
enum class Reduction {
  mean,  // one scalar: the mean over the samples that count
  none,  // one value per sample (Chainer's reduce='no')
};

// Options of softmax_cross_entropy; designated initializers read well: {.label_smoothing = 0.1}.
struct KUSARI_API SoftmaxCrossEntropyOptions {
  int64_t ignore_label = -1;     // samples with this label add nothing and are not counted in the mean
  double label_smoothing = 0.0;  // ε in [0, 1]: the target is (1 - ε) one_hot(t) + ε / C
  Reduction reduce = Reduction::mean;
};

// Cross entropy between softmax(x) over axis 1 and the labels: x has shape (N, C) and a floating dtype,
// t has shape (N,) and dtype int32 or int64. Per sample: -(1 - ε) log p_t - ε / C Σ_c log p_c (0 for
// ignored samples). Throws IndexError naming the label and C when a label is outside [0, C) and is not
// ignore_label. Only x is differentiated.
KUSARI_API Variable softmax_cross_entropy(const Variable& x, const Variable& t, const SoftmaxCrossEntropyOptions& options = {});

// The mean over all elements of (a - b)^2; a and b have one shape and dtype.
KUSARI_API Variable mean_squared_error(const Variable& a, const Variable& b);

}  // namespace kusari::functions
