#include <kusari/distributed/multi_node_normalization.h>

#include <kusari/distributed/detail/communicator_impl.h>
#include <kusari/distributed/mpi_interop.h>
#include <kusari/distributed/detail/rank_agreement.h>
#include <kusari/distributed/sum_across_ranks.h>

namespace kusari::distributed {

functions::BatchNormalizationResult multi_node_batch_normalization(const Variable& x, const Variable& gamma,
                                                                   const Variable& beta, const Communicator& comm,
                                                                   double eps, functions::Activation activation,
                                                                   const Variable& residual) {
  bool channels_agreed = false;
  return multi_node_batch_normalization(x, gamma, beta, comm, channels_agreed, eps, activation, residual);
}

functions::BatchNormalizationResult multi_node_batch_normalization(const Variable& x, const Variable& gamma,
                                                                   const Variable& beta, const Communicator& comm,
                                                                   bool& channels_agreed, double eps,
                                                                   functions::Activation activation,
                                                                   const Variable& residual) {
  if (comm.options().check_sizes && !channels_agreed) {
    // Every rank takes part even when its x is not (N, C, ...): split_batch_normalization then throws
    // alike on every rank.
    const int64_t channels = x.defined() && x.ndim() >= 2 ? x.shape()[1] : 0;
    const CollectiveScope scope = comm.impl().scope("multi_node_batch_normalization's channel count");
    require_same_count(mpi_comm(comm), 0, channels, "multi_node_batch_normalization", "channel counts");
    channels_agreed = true;
  }
  return functions::split_batch_normalization(
      x, gamma, beta,
      [comm](const Variable& part) { return sum_across_ranks(part, comm, LayoutCheck::agreed_by_caller); }, eps,
      activation, residual);
}

}  // namespace kusari::distributed
