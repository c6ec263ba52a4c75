#pragma once
// Thread-local run configuration, as chainer.config: whether code runs in training mode.

#include <kusari/core/api.h>

namespace kusari {

// The settings functions consult (dropout, batch normalization, ...).
struct KUSARI_API Config {
  bool train = true;  // training mode: dropout drops, batch normalization uses batch statistics
};

// This thread's configuration.
KUSARI_API Config& config();

// Restores the previous train flag when it goes out of scope.
class KUSARI_API TrainModeGuard {
 public:
  // Sets config().train to `train` until destruction.
  explicit TrainModeGuard(bool train) : previous_(config().train) { config().train = train; }
  ~TrainModeGuard() { config().train = previous_; }
  TrainModeGuard(const TrainModeGuard&) = delete;
  TrainModeGuard& operator=(const TrainModeGuard&) = delete;

 private:
  bool previous_;
};

// Within the returned guard's lifetime config().train is `train`: `auto eval = using_train_mode(false);`.
[[nodiscard]] inline TrainModeGuard using_train_mode(bool train) { return TrainModeGuard(train); }

}  // namespace kusari
