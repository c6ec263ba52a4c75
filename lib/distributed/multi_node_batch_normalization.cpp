#include <kusari/distributed/multi_node_batch_normalization.h>

#include <kusari/distributed/multi_node_normalization.h>

namespace kusari::links {
namespace {

// Throws ValueError when bn normalises ghost-batch groups: their statistics are local by definition.
const BatchNormalization& require_local_batch(const BatchNormalization& bn) {
  if (bn.group_size() > 0) {
    throw ValueError(cat("MultiNodeBatchNormalization: ghost batch normalization groups are local-only; expected "
                         "a group size of 0, got ", bn.group_size()));
  }
  return bn;
}

}  // namespace

MultiNodeBatchNormalization::MultiNodeBatchNormalization(const BatchNormalizationOptions& options,
                                                         distributed::Communicator comm)
    : BatchNormalization(options), comm_(std::move(comm)) {
  require_local_batch(*this);
}

MultiNodeBatchNormalization::MultiNodeBatchNormalization(const BatchNormalization& bn, distributed::Communicator comm)
    : BatchNormalization(require_local_batch(bn)), comm_(std::move(comm)) {}

std::shared_ptr<Link> MultiNodeBatchNormalization::shallow_clone() const {
  return std::make_shared<MultiNodeBatchNormalization>(*this);
}

functions::BatchNormalizationResult MultiNodeBatchNormalization::normalize_batch(const Variable& x,
                                                                                 const Variable& gamma,
                                                                                 const Variable& beta,
                                                                                 const Variable& residual) {
  return distributed::multi_node_batch_normalization(x, gamma, beta, comm_, eps(), activation(), residual);
}

}  // namespace kusari::links
