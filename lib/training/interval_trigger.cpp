#include <kusari/training/interval_trigger.h>

#include <cmath>

#include <kusari/core/error.h>

namespace kusari::training {

IntervalTrigger::IntervalTrigger(double period, std::string unit)
    : period_(period), progress_(std::move(unit), "IntervalTrigger") {
  if (!(period > 0) || !std::isfinite(period)) {
    throw ValueError(cat("IntervalTrigger: expected a finite period > 0, got ", period));
  }
}

bool IntervalTrigger::operator()(const Trainer& trainer) {
  const auto [previous, current] = progress_.advance(trainer);
  return previous && std::floor(*previous / period_) != std::floor(current / period_);
}

}  // namespace kusari::training
