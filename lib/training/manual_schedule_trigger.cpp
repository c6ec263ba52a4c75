#include <kusari/training/manual_schedule_trigger.h>

#include <algorithm>

#include <kusari/core/error.h>

namespace kusari::training {

ManualScheduleTrigger::ManualScheduleTrigger(std::vector<double> points, std::string unit)
    : points_(std::move(points)), progress_(std::move(unit), "ManualScheduleTrigger") {
  if (points_.empty()) throw ValueError("ManualScheduleTrigger: expected at least one point, got none");
  for (double point : points_) {
    if (!(point >= 0)) throw ValueError(cat("ManualScheduleTrigger: expected points >= 0, got ", point));
  }
}

bool ManualScheduleTrigger::operator()(const Trainer& trainer) {
  const auto progress = progress_.advance(trainer);
  const auto& previous = progress.first;
  const double current = progress.second;
  if (!previous) return false;
  return std::any_of(points_.begin(), points_.end(),
                     [&](double point) { return *previous < point && point <= current; });
}

std::optional<TrainingLength> ManualScheduleTrigger::training_length() const {
  return TrainingLength{*std::max_element(points_.begin(), points_.end()), progress_.unit()};
}

}  // namespace kusari::training
