#pragma once
// classification_loss: the LossFunction of a bare predictor (logits out) on batches {x, t} —
// softmax cross-entropy with Chainer's reports, in float32 whatever dtype the model computes in and
// whatever memory order its images come in.

#include <cstdint>
#include <memory>

#include <kusari/core/api.h>
#include <kusari/core/dtype.h>
#include <kusari/core/memory_order.h>
#include <kusari/links/link.h>
#include <kusari/training/loss_function.h>

namespace kusari::training {

// How classification_loss computes and what it reports.
struct ClassificationLossOptions {
  Dtype compute_dtype = Dtype::float32;  // x is cast to it before the model; the logits back to float32
  MemoryOrder memory_order = MemoryOrder::row_major;  // an image batch x (4-D) is put in it before the model
  double label_smoothing = 0;            // ε of the smoothed targets
  int64_t top_k = 5;                     // also reports main/accuracy_top<k> when there are more classes
};

// The softmax cross-entropy of predictor(x) against t, reporting main/loss, main/accuracy and (with
// more than top_k classes, top_k > 1) main/accuracy_top<k>; the Evaluator makes them validation/main/...
KUSARI_API LossFunction classification_loss(std::shared_ptr<links::Link> predictor,
                                            ClassificationLossOptions options = {});

}  // namespace kusari::training
