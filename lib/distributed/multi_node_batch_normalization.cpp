#include <kusari/distributed/multi_node_batch_normalization.h>

namespace kusari::links {

const BatchNormalization& require_whole_batch_statistics(const BatchNormalization& bn, const std::string& op,
                                                         const std::string& path) {
  if (bn.group_size() > 0) {
    throw ValueError(cat(op, ": ghost batch normalization groups are local-only; expected a group size of 0",
                         path.empty() ? std::string() : cat(" at '", path, "'"), ", got ", bn.group_size()));
  }
  return bn;
}

MultiNodeBatchNormalization::MultiNodeBatchNormalization(const BatchNormalizationOptions& options,
                                                         distributed::Communicator comm)
    : BatchNormalization(options), comm_(std::move(comm)) {
  require_whole_batch_statistics(*this, "MultiNodeBatchNormalization");
}

MultiNodeBatchNormalization::MultiNodeBatchNormalization(const BatchNormalization& bn, distributed::Communicator comm)
    : BatchNormalization(require_whole_batch_statistics(bn, "MultiNodeBatchNormalization")), comm_(std::move(comm)) {}

std::shared_ptr<Link> MultiNodeBatchNormalization::shallow_clone() const {
  return std::make_shared<MultiNodeBatchNormalization>(*this);
}

functions::BatchNormalizationResult MultiNodeBatchNormalization::normalize_batch(const Variable& x,
                                                                                 const Variable& gamma,
                                                                                 const Variable& beta,
                                                                                 const Variable& residual) {
  return distributed::multi_node_batch_normalization(x, gamma, beta, comm_, channels_agreed_, eps(), activation(),
                                                     residual);
}

}  // namespace kusari::links
