#pragma once
// What a run measures: the classification loss with its top-1 and top-5 accuracy, and per iteration
// the learning rate and the time an iteration takes.

#include <memory>

#include <kusari/core/dtype.h>
#include <kusari/links/link.h>
#include <kusari/optimizers/optimizer.h>
#include <kusari/training/extension.h>
#include <kusari/training/loss_function.h>

namespace kusari::recipes {

// The softmax cross-entropy of model(x) on a batch {x, t}, computed in float32 whatever `dtype` the
// model runs in (x is cast to it), reporting main/loss, main/accuracy and, with more than 5 classes,
// main/accuracy_top5.
training::LossFunction classification_loss(std::shared_ptr<links::Link> model, Dtype dtype, double label_smoothing);

// Extends `trainer` to report "lr" (the optimizer's rate in the iteration) and "time_per_iteration"
// (seconds of the update, from the end of the previous iteration's extensions) every iteration, so a
// log entry holds their means over its interval.
void observe_iteration(training::Trainer& trainer, std::shared_ptr<optimizers::Optimizer> optimizer);

}  // namespace kusari::recipes
