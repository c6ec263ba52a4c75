#pragma once
// Kernel contracts of softmax cross-entropy, forward and gradient.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

// How softmax cross-entropy turns labels into targets: a sample labelled ignore_label counts for nothing;
// any other sample's target is (1 - label_smoothing) one_hot(label) + label_smoothing / C.
struct KUSARI_API CrossEntropyTargets {
  int64_t ignore_label = -1;
  double label_smoothing = 0;
  bool mean = true;  // the loss is the mean over counted samples (their sum over max(count, 1)), else per sample
};

}  // namespace kusari

namespace kusari::kernel_ops {

// For x (N, C) floating and labels t (N,) int32/int64: log_p (N, C, contiguous) = log softmax of each row,
// loss = each sample's cross entropy against its target ((N,), zero when ignored) or, when targets.mean,
// their mean (shape ()). A label outside [0, C) that is not ignore_label is an IndexError: thrown by the
// call on the host; a device that checks labels where they are (CUDA) makes that sample's results NaN and
// raises the error at the host's next synchronization with it, so that the call never waits.
struct KUSARI_API SoftmaxCrossEntropy {
  static constexpr const char* name = "softmax_cross_entropy";
  using Fn = void(const Array& x, const Array& t, const CrossEntropyTargets& targets, const Array& log_p,
                  const Array& loss);
};
// gx (N, C, contiguous) = (exp(log_p) - target) times the loss's gradient gy (per sample (N,), or () divided
// by the count of samples when targets.mean), zero on ignored rows; log_p and t as SoftmaxCrossEntropy had.
struct KUSARI_API SoftmaxCrossEntropyGrad {
  static constexpr const char* name = "softmax_cross_entropy_grad";
  using Fn = void(const Array& log_p, const Array& t, const Array& gy, const CrossEntropyTargets& targets,
                  const Array& gx);
};

}  // namespace kusari::kernel_ops
