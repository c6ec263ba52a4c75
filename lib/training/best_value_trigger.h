#pragma once
// Triggers that fire when an observed value improves: MinValueTrigger for losses, MaxValueTrigger for
// accuracies (Chainer's BestValueTrigger family), e.g. to snapshot the best model so far.

#include <optional>
#include <string>

#include <kusari/core/api.h>
#include <kusari/training/dict_summary.h>
#include <kusari/training/trigger.h>

namespace kusari::training {

// Averages `key` over each interval of an inner trigger and fires when the mean beats the best so far.
class KUSARI_API BestValueTrigger : public CloneableTrigger<BestValueTrigger> {
 public:
  // Which direction is better.
  enum class Better { lower, higher };
  // Watches `key` (e.g. "validation/main/loss") over intervals of `trigger` (default: each epoch).
  BestValueTrigger(std::string key, Better better, Trigger trigger = {});
  // Adds the current observation of the key; when the inner trigger fires, compares the interval's
  // mean with the best (the first mean always counts as an improvement). Throws ValueError naming the
  // observed keys when the key was never observed in the interval.
  bool operator()(const Trainer& trainer) override;
  // Saves or loads the inner trigger, the interval's summary and the best value.
  void serialize(Serializer& serializer) override;

 private:
  std::string key_;
  Better better_;
  Trigger interval_;
  DictSummary summary_;
  std::optional<double> best_;
};

// Fires when the mean of `key` over an interval is the lowest so far.
class KUSARI_API MinValueTrigger : public BestValueTrigger {
 public:
  // Watches `key` over intervals of `trigger` (default: each epoch).
  explicit MinValueTrigger(std::string key, Trigger trigger = {})
      : BestValueTrigger(std::move(key), Better::lower, std::move(trigger)) {}
};

// Fires when the mean of `key` over an interval is the highest so far.
class KUSARI_API MaxValueTrigger : public BestValueTrigger {
 public:
  // Watches `key` over intervals of `trigger` (default: each epoch).
  explicit MaxValueTrigger(std::string key, Trigger trigger = {})
      : BestValueTrigger(std::move(key), Better::higher, std::move(trigger)) {}
};

}  // namespace kusari::training
