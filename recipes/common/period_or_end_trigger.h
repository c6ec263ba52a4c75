#pragma once
// Triggers of the run loop: the stop trigger (the epochs of --epoch, or fewer iterations with
// --max-iterations) and one that fires every `period` epochs and once more at the end, so a run
// shorter than an epoch (or ending mid-period) still logs and evaluates when it stops.

#include <cstdint>

#include <kusari/training/trigger.h>
#include <kusari/training/unit_progress.h>

namespace kusari::recipes {

// Where training stops: after `epochs` epochs, or earlier at iteration `max_iterations` when > 0.
struct TrainingEnd {
  double epochs = 0;
  int64_t max_iterations = 0;

  // Whether training has reached its end at the trainer's current progress.
  bool reached(const training::Trainer& trainer) const;
};

// Fires once the end is reached (stateless, so a snapshot resumes under another --max-iterations).
class StopTrigger : public training::CloneableTrigger<StopTrigger> {
 public:
  // Stops at `end`.
  explicit StopTrigger(TrainingEnd end) : end_(end) {}
  // Whether the end has been reached.
  bool operator()(const training::Trainer& trainer) override { return end_.reached(trainer); }
  // The epochs, or the iterations when --max-iterations is given (for the progress bar).
  std::optional<training::TrainingLength> training_length() const override;

 private:
  TrainingEnd end_;
};

// Fires when the epoch crosses a multiple of `period` or training reaches its end.
class PeriodOrEndTrigger : public training::CloneableTrigger<PeriodOrEndTrigger> {
 public:
  // period > 0 in epochs.
  PeriodOrEndTrigger(double period, TrainingEnd end);
  // Whether the last update crossed a multiple of the period or reached the end.
  bool operator()(const training::Trainer& trainer) override;
  // Saves or loads the epoch seen at the previous call.
  void serialize(Serializer& serializer) override { progress_.serialize(serializer); }

 private:
  double period_;
  TrainingEnd end_;
  training::UnitProgress progress_;
};

// Fires when either of two triggers fires (both are called every time, so each keeps its own count).
class EitherTrigger : public training::CloneableTrigger<EitherTrigger> {
 public:
  // Fires with `first` or `second`.
  EitherTrigger(training::Trigger first, training::Trigger second)
      : first_(std::move(first)), second_(std::move(second)) {}
  // Whether either fired after the last update.
  bool operator()(const training::Trainer& trainer) override;
  // Saves or loads both triggers' states under "first/" and "second/".
  void serialize(Serializer& serializer) override;

 private:
  training::Trigger first_, second_;
};

}  // namespace kusari::recipes
