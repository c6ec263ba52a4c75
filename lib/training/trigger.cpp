#include <kusari/training/trigger.h>

#include <kusari/core/error.h>
#include <kusari/training/interval_trigger.h>

namespace kusari::training {

Trigger::Trigger(double period, const std::string& unit) : Trigger(IntervalTrigger(period, unit)) {}

Trigger& Trigger::operator=(const Trigger& other) {
  if (this != &other) impl_ = other.impl_ ? other.impl_->clone() : nullptr;
  return *this;
}

bool Trigger::operator()(const Trainer& trainer) {
  if (!impl_) throw ValueError("Trigger: called an empty trigger");
  return (*impl_)(trainer);
}

void Trigger::serialize(Serializer& serializer) {
  if (impl_) impl_->serialize(serializer);
}

std::optional<TrainingLength> Trigger::training_length() const {
  return impl_ ? impl_->training_length() : std::nullopt;
}

}  // namespace kusari::training
