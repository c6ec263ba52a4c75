#pragma once
// Triggers decide, after each update, whether an extension runs (and, for the stop trigger, whether
// training ends). Trigger is the value type APIs take: `{1, "epoch"}` makes an IntervalTrigger, and
// any TriggerBase subclass converts to it.

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>

namespace kusari::training {

class Trainer;

// How long training runs, for progress reports: `length` units of "iteration" or "epoch".
struct KUSARI_API TrainingLength {
  double length = 0;
  std::string unit;
};

// The interface of every trigger (derive through CloneableTrigger).
class KUSARI_API TriggerBase {
 public:
  virtual ~TriggerBase() = default;
  // Whether to fire now; called once after every update with the trainer's current state.
  virtual bool operator()(const Trainer& trainer) = 0;
  // Saves or loads the trigger's state (none by default).
  virtual void serialize(Serializer&) {}
  // The point at which the trigger first fires, when it is known up front (used by ProgressBar).
  virtual std::optional<TrainingLength> training_length() const { return std::nullopt; }
  // A copy with its own state.
  virtual std::unique_ptr<TriggerBase> clone() const = 0;
};

// Implements clone() for a trigger class: `class MyTrigger : public CloneableTrigger<MyTrigger>`.
template <class Derived>
class KUSARI_API CloneableTrigger : public TriggerBase {
 public:
  std::unique_ptr<TriggerBase> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

// A trigger held by value (copies have their own state); default-constructed it is empty, which
// APIs read as "use the default".
class KUSARI_API Trigger {
 public:
  // No trigger.
  Trigger() = default;
  // IntervalTrigger(period, unit): fires every `period` iterations or epochs.
  Trigger(double period, const std::string& unit);
  // Holds a copy of `trigger`.
  template <std::derived_from<TriggerBase> T>
  Trigger(T trigger) : impl_(std::make_unique<T>(std::move(trigger))) {}
  // Copies the held trigger with its state.
  Trigger(const Trigger& other) : impl_(other.impl_ ? other.impl_->clone() : nullptr) {}
  // Copies the held trigger with its state.
  Trigger& operator=(const Trigger& other);
  Trigger(Trigger&&) noexcept = default;
  Trigger& operator=(Trigger&&) noexcept = default;

  // Whether a trigger is held.
  explicit operator bool() const { return impl_ != nullptr; }
  // Calls the trigger; throws ValueError when empty.
  bool operator()(const Trainer& trainer);
  // Saves or loads the trigger's state (nothing when empty).
  void serialize(Serializer& serializer);
  // The trigger's training length, if known.
  std::optional<TrainingLength> training_length() const;

 private:
  std::unique_ptr<TriggerBase> impl_;
};

}  // namespace kusari::training
