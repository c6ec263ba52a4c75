#include <kusari/training/schedule_shift.h>

#include <kusari/training/trainer.h>

namespace kusari::training {

ScheduleShift::ScheduleShift(std::string hyperparameter, std::shared_ptr<const optimizers::Schedule> schedule,
                             std::string unit, std::shared_ptr<optimizers::Optimizer> optimizer)
    : hyperparameter_(std::move(hyperparameter)), schedule_(std::move(schedule)), unit_(std::move(unit)),
      optimizer_(std::move(optimizer)) {
  if (!schedule_) throw ValueError(cat("ScheduleShift '", hyperparameter_, "': expected a schedule, got null"));
  if (unit_ != "iteration" && unit_ != "epoch") {
    throw ValueError(cat("ScheduleShift '", hyperparameter_, "': expected the unit \"iteration\" or \"epoch\", got \"",
                         unit_, "\""));
  }
}

void ScheduleShift::apply(Trainer& trainer) {
  Updater& updater = trainer.updater();
  const double progress = unit_ == "epoch" ? updater.epoch_detail() : static_cast<double>(updater.iteration());
  optimizers::Optimizer& optimizer = optimizer_ ? *optimizer_ : updater.optimizer();
  optimizer.hyperparam().set(hyperparameter_, schedule_->value(progress));
}

}  // namespace kusari::training
