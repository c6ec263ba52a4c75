#pragma once
// Trainer: the training loop. It calls the updater until the stop trigger fires and, after every
// update, each extension whose trigger fires, collecting what is reported into one observation per
// iteration (Chainer's Trainer).

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/error.h>
#include <kusari/core/serializer.h>
#include <kusari/training/extension.h>
#include <kusari/training/reporter.h>
#include <kusari/training/trigger.h>
#include <kusari/training/updater.h>

namespace kusari::training {

// Runs an updater with extensions: `Trainer trainer(updater, {20, "epoch"}, "result"); trainer.run();`.
class KUSARI_API Trainer {
 public:
  // Trains with `updater` until `stop_trigger` fires, writing files under the directory `out`.
  // Throws ValueError for a null updater or an empty trigger.
  Trainer(std::shared_ptr<Updater> updater, Trigger stop_trigger, std::string out = "result");

  // Registers an extension; an empty trigger, priority or name means the extension's default. A name
  // already taken gets a suffix ("_1", "_2", ...). Throws ValueError while run() is going on.
  void extend(std::shared_ptr<Extension> extension, Trigger trigger = {}, std::optional<int> priority = {},
              const std::string& name = "");
  // Creates `out`, calls every extension's restore() then initialize() in priority order, then updates
  // until the stop trigger fires, running the extensions whose triggers fire after each update (and
  // within the reporter's scope, so their reports join the iteration's observation). Extensions are
  // finalized however the loop ends; an exception is rethrown after that.
  void run();

  // The updater.
  Updater& updater() { return *updater_; }
  // Read-only updater.
  const Updater& updater() const { return *updater_; }
  // What was reported during the current iteration (the update and the extensions run so far).
  const Observation& observation() const { return reporter_.observation(); }
  // The output directory.
  const std::string& out() const { return out_; }
  // The stop trigger.
  const Trigger& stop_trigger() const { return stop_trigger_; }
  // Seconds spent in run(), including the time of runs this trainer was resumed from.
  double elapsed_time() const;
  // The extension registered as `name`; throws ValueError naming the registered ones if none is.
  Extension& get_extension(const std::string& name) const;
  // The extension `name` as T; throws ValueError when it has another type.
  template <class T>
  T& get_extension(const std::string& name) const {
    T* typed = dynamic_cast<T*>(&get_extension(name));
    if (!typed) throw ValueError(cat("Trainer: extension '", name, "' is not of the requested type"));
    return *typed;
  }

  // Saves or loads the updater ("updater/"), every extension ("extensions/<name>/") and its trigger
  // ("extension_triggers/<name>/"), the stop trigger ("stop_trigger/") and the elapsed time.
  void serialize(Serializer& serializer);

 private:
  struct Entry {
    std::string name;
    std::shared_ptr<Extension> extension;
    Trigger trigger;
    int priority;
  };
  using Clock = std::chrono::steady_clock;

  // The entries in the order they run: descending priority, then registration order.
  std::vector<Entry*> ordered_entries();
  // Calls every finalize(); after an error, a second error from a finalize() is dropped.
  void finalize(const std::vector<Entry*>& entries, bool after_error);

  std::shared_ptr<Updater> updater_;
  Trigger stop_trigger_;
  std::string out_;
  std::vector<Entry> entries_;  // in registration order
  Reporter reporter_;
  double elapsed_before_ = 0;               // seconds of earlier runs
  std::optional<Clock::time_point> started_;  // start of the current run
  bool running_ = false;
};

}  // namespace kusari::training
