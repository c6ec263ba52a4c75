#include <kusari/distributed/multi_node_normalization.h>

#include <kusari/distributed/sum_across_ranks.h>

namespace kusari::distributed {

functions::BatchNormalizationResult multi_node_batch_normalization(const Variable& x, const Variable& gamma,
                                                                   const Variable& beta, const Communicator& comm,
                                                                   double eps, functions::Activation activation,
                                                                   const Variable& residual) {
  return functions::split_batch_normalization(
      x, gamma, beta, [comm](const Variable& part) { return sum_across_ranks(part, comm); }, eps, activation,
      residual);
}

}  // namespace kusari::distributed
