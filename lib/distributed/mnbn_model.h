#pragma once
// create_mnbn_model: turns every BatchNormalization of a model into a MultiNodeBatchNormalization.

#include <memory>

#include <kusari/core/api.h>
#include <kusari/distributed/communicator.h>
#include <kusari/links/link.h>

namespace kusari::distributed {

// Replaces, in place, every BatchNormalization in model's tree (not already multi-node) by a
// MultiNodeBatchNormalization over comm that shares its settings, parameters and persistent values,
// so an optimizer already set up on the model keeps working. Returns the model, or the replacement
// when the model itself is a BatchNormalization. A layer reached twice gets one replacement.
KUSARI_API std::shared_ptr<links::Link> create_mnbn_model(const std::shared_ptr<links::Link>& model, const Communicator& comm);

// The same for a model held by its own type.
template <class T>
std::shared_ptr<T> create_mnbn_model(const std::shared_ptr<T>& model, const Communicator& comm) {
  return std::dynamic_pointer_cast<T>(create_mnbn_model(std::static_pointer_cast<links::Link>(model), comm));
}

}  // namespace kusari::distributed
