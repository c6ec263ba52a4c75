#include "period_or_end_trigger.h"

#include <cmath>

namespace kusari::recipes {

PeriodOrEndTrigger::PeriodOrEndTrigger(double period, double end)
    : period_(period), end_(end), progress_("epoch", "PeriodOrEndTrigger") {}

bool PeriodOrEndTrigger::operator()(const training::Trainer& trainer) {
  const auto [previous, current] = progress_.advance(trainer);
  if (!previous) return false;
  const bool crossed_period = std::floor(*previous / period_) != std::floor(current / period_);
  const bool crossed_end = *previous < end_ && current >= end_;
  return crossed_period || crossed_end;
}

}  // namespace kusari::recipes
