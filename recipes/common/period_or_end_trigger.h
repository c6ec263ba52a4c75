#pragma once
// Triggers of the run loop: the stop trigger (the epochs of --epoch, or fewer iterations with
// --max-iterations), one that fires with a period and once more at the end, and either of two.

#include <cstdint>

#include <kusari/training/trigger.h>

namespace kusari::recipes {

// Where training stops: after `epochs` epochs, or earlier at iteration `max_iterations` when > 0.
struct TrainingEnd {
  double epochs = 0;           // --epoch
  int64_t max_iterations = 0;  // --max-iterations (0: none)

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

// Fires with `period` (e.g. every epoch) and when training reaches its end, so a run that stops
// between two periods still logs and evaluates at its end.
class PeriodOrEndTrigger : public training::CloneableTrigger<PeriodOrEndTrigger> {
 public:
  // Fires with `period` (called after every update, so it keeps its own count) or at `end`.
  PeriodOrEndTrigger(training::Trigger period, TrainingEnd end) : period_(std::move(period)), end_(end) {}
  // Whether the period fired after the last update or the end was reached.
  bool operator()(const training::Trainer& trainer) override;
  // Saves or loads the period's state.
  void serialize(Serializer& serializer) override { period_.serialize(serializer); }

 private:
  training::Trigger period_;
  TrainingEnd end_;
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
