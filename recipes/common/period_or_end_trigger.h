#pragma once
// PeriodOrEndTrigger: fires every `period` epochs and once more when training ends between two
// multiples, so a run shorter than an epoch (or ending mid-period) still logs and evaluates at its end.

#include <kusari/training/trigger.h>
#include <kusari/training/unit_progress.h>

namespace kusari::recipes {

// Fires when the epoch crosses a multiple of `period` or reaches `end` (the stop trigger's epochs).
class PeriodOrEndTrigger : public training::CloneableTrigger<PeriodOrEndTrigger> {
 public:
  // period > 0 and end > 0, in epochs.
  PeriodOrEndTrigger(double period, double end);
  // Whether the last update crossed a multiple of the period or the end.
  bool operator()(const training::Trainer& trainer) override;
  // Saves or loads the epoch seen at the previous call.
  void serialize(Serializer& serializer) override { progress_.serialize(serializer); }

 private:
  double period_, end_;
  training::UnitProgress progress_;
};

}  // namespace kusari::recipes
