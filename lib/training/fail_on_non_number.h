#pragma once
// FailOnNonNumber: stops training as soon as a parameter becomes NaN or infinite (Chainer's
// FailOnNonNumber), or, checking every few iterations, soon after (a NaN stays in a parameter).

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// Settings of a FailOnNonNumber.
struct KUSARI_API FailOnNonNumberOptions {
  // Checks after the iterations that are multiples of this (≥ 1) and after each epoch's last one: on a
  // GPU each check waits for the device, so a recipe checks every 50, and before any epoch-end snapshot.
  int64_t every = 1;
};

// Checks every parameter of the updater's model after the updates `options` say.
class KUSARI_API FailOnNonNumber : public Extension {
 public:
  // Checks as `options` say (ValueError for every < 1).
  explicit FailOnNonNumber(FailOnNonNumberOptions options = {});
  // Throws ValueError naming the first parameter (in path order) holding a NaN or an infinity and the
  // iteration.
  void operator()(Trainer& trainer) override;
  std::string default_name() const override { return "FailOnNonNumber"; }
  int priority() const override { return kPriorityWriter; }

 private:
  FailOnNonNumberOptions options_;
};

}  // namespace kusari::training
