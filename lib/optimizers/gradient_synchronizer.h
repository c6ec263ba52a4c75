#pragma once
// GradientSynchronizer: what makes the gradients of a step agree across processes before an
// optimizer reads them (kusari::distributed's multi-node optimizer installs one).

#include <memory>

#include <kusari/links/link.h>

namespace kusari::optimizers {

// Attached to an Optimizer: sees its target from setup() on and runs first in every update().
class GradientSynchronizer {
 public:
  virtual ~GradientSynchronizer() = default;
  // Called by Optimizer::setup (or at installation when the optimizer already has a target).
  virtual void attach(const std::shared_ptr<links::Link>& target) = 0;
  // Called at the start of Optimizer::update: leaves the gradients to apply in the target's
  // parameters, or returns false to skip this step (the update then returns false too).
  virtual bool synchronize() = 0;
};

}  // namespace kusari::optimizers
