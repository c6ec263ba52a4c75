#include <kusari/training/extension.h>

#include <kusari/core/error.h>

namespace kusari::training {

LambdaExtension::LambdaExtension(std::function<void(Trainer&)> function, std::string name, Trigger trigger,
                                 int priority)
    : function_(std::move(function)), name_(std::move(name)), trigger_(std::move(trigger)), priority_(priority) {
  if (!function_) throw ValueError(cat("LambdaExtension '", name_, "': expected a function, got an empty one"));
  if (!trigger_) throw ValueError(cat("LambdaExtension '", name_, "': expected a trigger, got an empty one"));
}

std::shared_ptr<Extension> make_extension(std::function<void(Trainer&)> function, std::string name, Trigger trigger,
                                          int priority) {
  return std::make_shared<LambdaExtension>(std::move(function), std::move(name), std::move(trigger), priority);
}

}  // namespace kusari::training
