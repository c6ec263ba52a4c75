#pragma once
// IntervalTrigger: fires every `period` iterations or epochs (Chainer's IntervalTrigger).

#include <string>

#include <kusari/core/api.h>
#include <kusari/training/trigger.h>
#include <kusari/training/unit_progress.h>

namespace kusari::training {

// Fires whenever the progress crosses a multiple of the period.
class KUSARI_API IntervalTrigger : public CloneableTrigger<IntervalTrigger> {
 public:
  // period > 0 (fractional epochs allowed); unit "iteration" or "epoch". Throws ValueError otherwise.
  IntervalTrigger(double period, std::string unit);
  // Whether the last update crossed a multiple of the period.
  bool operator()(const Trainer& trainer) override;
  // Saves or loads the progress seen at the previous call.
  void serialize(Serializer& serializer) override { progress_.serialize(serializer); }
  // {period, unit}: as a stop trigger, training ends after one period.
  std::optional<TrainingLength> training_length() const override { return TrainingLength{period_, unit()}; }
  // "iteration" or "epoch".
  const std::string& unit() const { return progress_.unit(); }

 private:
  double period_;
  UnitProgress progress_;
};

}  // namespace kusari::training
