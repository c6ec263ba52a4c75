#include <kusari/training/loss_function.h>

#include <kusari/core/error.h>

namespace kusari::training {

void require_input_and_target(const std::vector<Array>& batch) {
  if (batch.size() != 2) {
    throw ValueError(cat("supervised_loss: expected a batch of two components {x, t}, got ", batch.size()));
  }
}

}  // namespace kusari::training
