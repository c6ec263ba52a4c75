#include "period_or_end_trigger.h"

#include <kusari/training/trainer.h>

namespace kusari::recipes {

bool TrainingEnd::reached(const training::Trainer& trainer) const {
  const training::Updater& updater = trainer.updater();
  return updater.epoch_detail() >= epochs || (max_iterations > 0 && updater.iteration() >= max_iterations);
}

std::optional<training::TrainingLength> StopTrigger::training_length() const {
  if (end_.max_iterations > 0) return training::TrainingLength{static_cast<double>(end_.max_iterations), "iteration"};
  return training::TrainingLength{end_.epochs, "epoch"};
}

bool PeriodOrEndTrigger::operator()(const training::Trainer& trainer) {
  const bool period = period_(trainer);
  return period || end_.reached(trainer);
}

bool EitherTrigger::operator()(const training::Trainer& trainer) {
  const bool first = first_(trainer);
  const bool second = second_(trainer);
  return first || second;
}

void EitherTrigger::serialize(Serializer& serializer) {
  first_.serialize(serializer["first"]);
  second_.serialize(serializer["second"]);
}

}  // namespace kusari::recipes
