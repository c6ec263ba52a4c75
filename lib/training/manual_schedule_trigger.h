#pragma once
// ManualScheduleTrigger: fires at listed iterations or epochs (Chainer's ManualScheduleTrigger).

#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/training/trigger.h>
#include <kusari/training/unit_progress.h>

namespace kusari::training {

// Fires when the progress reaches one of the given points.
class KUSARI_API ManualScheduleTrigger : public CloneableTrigger<ManualScheduleTrigger> {
 public:
  // points non-empty and ≥ 0; unit "iteration" or "epoch". Throws ValueError otherwise.
  ManualScheduleTrigger(std::vector<double> points, std::string unit);
  // Whether the last update reached a point (previous < point ≤ current).
  bool operator()(const Trainer& trainer) override;
  // Saves or loads the progress seen at the previous call.
  void serialize(Serializer& serializer) override { progress_.serialize(serializer); }
  // {last point, unit}.
  std::optional<TrainingLength> training_length() const override;

 private:
  std::vector<double> points_;
  UnitProgress progress_;
};

}  // namespace kusari::training
