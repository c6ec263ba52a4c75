#pragma once
// ScheduleShift: sets an optimizer hyperparameter from a schedule before every update, e.g. a
// warm-up followed by a polynomial decay of the learning rate (what Chainer's LinearShift,
// ExponentialShift, ... do, driven by kusari's schedules).

#include <memory>
#include <string>

#include <kusari/core/api.h>
#include <kusari/optimizers/optimizer.h>
#include <kusari/optimizers/schedules.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// Keeps optimizer.hyperparam()[name] equal to schedule.value(progress), where progress is the number
// of iterations done or the fractional epoch.
class KUSARI_API ScheduleShift : public Extension {
 public:
  // Drives `hyperparameter` (e.g. "lr") of `optimizer` (default: the updater's) by `schedule` evaluated
  // on `unit` ("iteration" or "epoch"). Throws ValueError for a null schedule or another unit.
  ScheduleShift(std::string hyperparameter, std::shared_ptr<const optimizers::Schedule> schedule,
                std::string unit = "iteration", std::shared_ptr<optimizers::Optimizer> optimizer = nullptr);
  // Sets the value for the next update.
  void operator()(Trainer& trainer) override { apply(trainer); }
  // Sets the value for the first update (after a snapshot was restored, at the resumed progress).
  void initialize(Trainer& trainer) override { apply(trainer); }
  std::string default_name() const override { return "ScheduleShift_" + hyperparameter_; }
  int priority() const override { return kPriorityEditor; }

 private:
  void apply(Trainer& trainer);

  std::string hyperparameter_;
  std::shared_ptr<const optimizers::Schedule> schedule_;
  std::string unit_;
  std::shared_ptr<optimizers::Optimizer> optimizer_;
};

}  // namespace kusari::training
