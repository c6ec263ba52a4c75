#pragma once
// FailOnNonNumber: stops training as soon as a parameter becomes NaN or infinite (Chainer's
// FailOnNonNumber).

#include <kusari/core/api.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// Checks every parameter of the updater's model after each update.
class KUSARI_API FailOnNonNumber : public Extension {
 public:
  // Throws ValueError naming the first parameter (in path order) holding a NaN or an infinity and the
  // iteration.
  void operator()(Trainer& trainer) override;
  std::string default_name() const override { return "FailOnNonNumber"; }
  int priority() const override { return kPriorityWriter; }
};

}  // namespace kusari::training
