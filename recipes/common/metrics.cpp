#include "metrics.h"

#include <chrono>

#include <kusari/training/observe_value.h>

namespace kusari::recipes {

void observe_iteration(training::Trainer& trainer) {
  using Clock = std::chrono::steady_clock;
  auto last = std::make_shared<Clock::time_point>(Clock::now());
  trainer.extend(training::observe_lr());
  trainer.extend(training::make_extension(
      [last](training::Trainer&) {
        const double seconds = std::chrono::duration<double>(Clock::now() - *last).count();
        training::report({{"time_per_iteration", seconds}});
      },
      "observe_iteration", {1, "iteration"}, training::kPriorityWriter + 1));
  // After every other extension (snapshots included), so evaluation time is not counted.
  trainer.extend(training::make_extension([last](training::Trainer&) { *last = Clock::now(); }, "iteration_clock",
                                          {1, "iteration"}, training::kPrioritySnapshot - 1));
}

void add_images_per_second(training::Observation& entry, int64_t batchsize) {
  const auto time = entry.find("time_per_iteration");
  if (time != entry.end() && time->second > 0) entry["images_per_second"] = batchsize / time->second;
}

}  // namespace kusari::recipes
