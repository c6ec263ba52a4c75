#pragma once
// Updater: what a Trainer calls once per iteration — fetch a batch, compute the loss, update the
// parameters — and the counters triggers read (Chainer's Updater).

#include <cstdint>
#include <optional>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::training {

// The interface of a training step.
class KUSARI_API Updater {
 public:
  virtual ~Updater() = default;
  // Runs one iteration.
  virtual void update() = 0;
  // Iterations run so far.
  virtual int64_t iteration() const = 0;
  // Completed passes over the training data.
  virtual int64_t epoch() const = 0;
  // Epochs done as a fraction.
  virtual double epoch_detail() const = 0;
  // epoch_detail() before the last iteration; empty before the first.
  virtual std::optional<double> previous_epoch_detail() const = 0;
  // Whether the last iteration completed an epoch.
  virtual bool is_new_epoch() const = 0;
  // The optimizer of the main model (what schedules and FailOnNonNumber act on).
  virtual optimizers::Optimizer& optimizer() = 0;
  // Saves or loads everything needed to continue exactly where the updater is.
  virtual void serialize(Serializer& serializer) = 0;
};

}  // namespace kusari::training
