#pragma once
// GradientSynchronizer: what makes the gradients of a step agree across processes before an
// optimizer reads them (kusari::distributed's multi-node optimizer installs one).

#include <memory>
#include <optional>

#include <kusari/core/api.h>
#include <kusari/links/link.h>

namespace kusari::optimizers {

// Attached to an Optimizer: sees its target from setup() on and runs first in every update().
class KUSARI_API GradientSynchronizer {
 public:
  virtual ~GradientSynchronizer() = default;
  // Called by Optimizer::setup (or at installation when the optimizer already has a target).
  virtual void attach(const std::shared_ptr<links::Link>& target) = 0;
  // Called at the start of Optimizer::update with the loss scale the gradients in the target were
  // computed with: leaves the gradients to apply in the target's parameters and returns the loss
  // scale those were computed with (another step's under double buffering), or nothing to skip this
  // step (the update then returns false too).
  virtual std::optional<double> synchronize(double loss_scale) = 0;
};

}  // namespace kusari::optimizers
