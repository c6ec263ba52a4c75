#include <kusari/training/observe_value.h>

#include <kusari/core/error.h>
#include <kusari/optimizers/optimizer.h>
#include <kusari/training/reporter.h>
#include <kusari/training/trainer.h>

namespace kusari::training {

std::shared_ptr<Extension> observe_value(std::string key, std::function<double(Trainer&)> value) {
  if (!value) throw ValueError(cat("observe_value: expected a function for '", key, "', got an empty one"));
  const std::string name = "observe_" + key;
  return make_extension([key = std::move(key), value = std::move(value)](Trainer& trainer) {
    report({{key, value(trainer)}});
  }, name, {1, "iteration"}, kPriorityWriter);
}

std::shared_ptr<Extension> observe_lr(std::string key) {
  return observe_value(std::move(key), [](Trainer& trainer) { return trainer.updater().optimizer().lr(); });
}

}  // namespace kusari::training
