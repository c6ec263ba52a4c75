#pragma once
// observe_value and observe_lr: extensions that report a value of the trainer each iteration, so the
// log holds its mean over each interval (Chainer's extensions.observe_value and observe_lr).

#include <functional>
#include <memory>
#include <string>

#include <kusari/core/api.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// Reports `key` = value(trainer) when its trigger fires (every iteration unless told otherwise), ahead
// of the readers (LogReport, PrintReport).
KUSARI_API std::shared_ptr<Extension> observe_value(std::string key, std::function<double(Trainer&)> value);

// Reports `key` = the learning rate of the trainer's optimizer in the iteration just run.
KUSARI_API std::shared_ptr<Extension> observe_lr(std::string key = "lr");

}  // namespace kusari::training
