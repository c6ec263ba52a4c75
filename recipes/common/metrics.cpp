#include "metrics.h"

#include <chrono>

#include <kusari/functions/cast.h>
#include <kusari/functions/evaluation.h>
#include <kusari/functions/loss.h>
#include <kusari/training/reporter.h>
#include <kusari/training/trainer.h>

namespace kusari::recipes {

namespace F = kusari::functions;

training::LossFunction classification_loss(std::shared_ptr<links::Link> model, Dtype dtype, double label_smoothing) {
  return [model, dtype, label_smoothing](const std::vector<Array>& batch) {
    const Variable x(dtype == Dtype::float32 ? batch.at(0) : batch.at(0).astype(dtype), false);
    const Variable t(batch.at(1), false);
    Variable y = model->forward(x);
    if (y.dtype() != Dtype::float32) y = F::cast(y, Dtype::float32);
    const Variable loss = F::softmax_cross_entropy(y, t, {.label_smoothing = label_smoothing});
    training::report({{"main/loss", loss}, {"main/accuracy", F::accuracy(y, t)}});
    if (y.shape()[1] > 5) training::report({{"main/accuracy_top5", F::accuracy(y, t, {}, 5)}});
    return loss;
  };
}

void observe_iteration(training::Trainer& trainer, std::shared_ptr<optimizers::Optimizer> optimizer) {
  using Clock = std::chrono::steady_clock;
  auto last = std::make_shared<Clock::time_point>(Clock::now());
  trainer.extend(training::make_extension(
      [optimizer, last](training::Trainer&) {
        training::report({{"lr", optimizer->lr()},
                          {"time_per_iteration", std::chrono::duration<double>(Clock::now() - *last).count()}});
      },
      "observe_iteration", {1, "iteration"}, training::kPriorityWriter + 1));
  // After every other extension (snapshots included), so evaluation time is not counted.
  trainer.extend(training::make_extension([last](training::Trainer&) { *last = Clock::now(); }, "iteration_clock",
                                          {1, "iteration"}, training::kPrioritySnapshot - 1));
}

}  // namespace kusari::recipes
