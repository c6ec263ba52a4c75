#pragma once
// Extension: something a Trainer runs between iterations when its trigger fires — logging,
// evaluation, snapshots, schedules (Chainer's Extension).

#include <functional>
#include <memory>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>
#include <kusari/training/trigger.h>

namespace kusari::training {

// Extensions run in descending priority within an iteration (ties in the order they were added).
inline constexpr int kPriorityWriter = 300;    // adds to the observation (Evaluator)
inline constexpr int kPriorityEditor = 200;    // changes training state (schedules)
inline constexpr int kPriorityReader = 100;    // reads the observation (LogReport, PrintReport)
inline constexpr int kPrioritySnapshot = -100; // runs after everything else has updated its state

// The interface of every extension; all hooks but operator() default to doing nothing.
class KUSARI_API Extension {
 public:
  virtual ~Extension() = default;
  // Runs the extension (its trigger fired after an update).
  virtual void operator()(Trainer& trainer) = 0;
  // The name the trainer registers it under unless told otherwise.
  virtual std::string default_name() const = 0;
  // When it runs unless told otherwise (every iteration by default).
  virtual Trigger default_trigger() const { return {1, "iteration"}; }
  // Its priority unless told otherwise.
  virtual int priority() const { return kPriorityReader; }
  // Called at the start of Trainer::run before any initialize(): restores the trainer's state (a
  // snapshot with autoload reads itself here), so every initialize() sees the resumed state.
  virtual void restore(Trainer&) {}
  // Called at the start of Trainer::run, after every restore().
  virtual void initialize(Trainer&) {}
  // Called when Trainer::run ends, normally or by an exception.
  virtual void finalize(Trainer&) {}
  // Saves or loads the extension's state with the trainer's.
  virtual void serialize(Serializer&) {}
};

// An extension that calls a function.
class KUSARI_API LambdaExtension : public Extension {
 public:
  // Runs `function` under `name`, by default when `trigger` fires with `priority`.
  LambdaExtension(std::function<void(Trainer&)> function, std::string name, Trigger trigger = {1, "iteration"},
                  int priority = kPriorityReader);
  void operator()(Trainer& trainer) override { function_(trainer); }
  std::string default_name() const override { return name_; }
  Trigger default_trigger() const override { return trigger_; }
  int priority() const override { return priority_; }

 private:
  std::function<void(Trainer&)> function_;
  std::string name_;
  Trigger trigger_;
  int priority_;
};

// A LambdaExtension: `trainer.extend(make_extension([](Trainer& t) { ... }, "my_hook", {1, "epoch"}))`.
KUSARI_API std::shared_ptr<Extension> make_extension(std::function<void(Trainer&)> function, std::string name,
                                                     Trigger trigger = {1, "iteration"}, int priority = kPriorityReader);

}  // namespace kusari::training
