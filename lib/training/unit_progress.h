#pragma once
// UnitProgress: the training progress a trigger measures ("iteration" or "epoch") and its value at
// the trigger's previous call, the bookkeeping IntervalTrigger and ManualScheduleTrigger share.

#include <optional>
#include <string>
#include <utility>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>

namespace kusari::training {

class Trainer;

// Tracks one unit of progress from call to call.
class KUSARI_API UnitProgress {
 public:
  // Throws ValueError naming `trigger` unless unit is "iteration" or "epoch".
  UnitProgress(std::string unit, const char* trigger);
  // (previous, current): the progress now and at the previous call. At the first call the previous
  // value is the progress before the last update (none before any update), so a trigger fires at
  // most once per crossing even when it is made after training started; a loaded previous value past
  // the progress now (saved while the trigger counted another unit) counts as none.
  std::pair<std::optional<double>, double> advance(const Trainer& trainer);
  // "iteration" or "epoch".
  const std::string& unit() const { return unit_; }
  // Saves or loads the previous value.
  void serialize(Serializer& serializer);

 private:
  std::string unit_;
  double previous_ = -1;  // negative before the first call
};

}  // namespace kusari::training
