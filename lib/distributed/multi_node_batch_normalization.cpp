#include <kusari/distributed/multi_node_batch_normalization.h>

#include <kusari/distributed/multi_node_normalization.h>

namespace kusari::links {

MultiNodeBatchNormalization::MultiNodeBatchNormalization(const BatchNormalizationOptions& options,
                                                         distributed::Communicator comm)
    : BatchNormalization(options), comm_(std::move(comm)) {}

MultiNodeBatchNormalization::MultiNodeBatchNormalization(const BatchNormalization& bn, distributed::Communicator comm)
    : BatchNormalization(bn), comm_(std::move(comm)) {}

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
