#include <kusari/distributed/multi_node_normalization.h>

#include <kusari/distributed/mpi_interop.h>
#include <kusari/distributed/rank_agreement.h>
#include <kusari/distributed/sum_across_ranks.h>

namespace kusari::distributed {

functions::BatchNormalizationResult multi_node_batch_normalization(const Variable& x, const Variable& gamma,
                                                                   const Variable& beta, const Communicator& comm,
                                                                   double eps, functions::Activation activation,
                                                                   const Variable& residual) {
  AgreedLayout agreed;
  return multi_node_batch_normalization(x, gamma, beta, comm, agreed, eps, activation, residual);
}

functions::BatchNormalizationResult multi_node_batch_normalization(const Variable& x, const Variable& gamma,
                                                                   const Variable& beta, const Communicator& comm,
                                                                   AgreedLayout& agreed, double eps,
                                                                   functions::Activation activation,
                                                                   const Variable& residual) {
  // Every rank takes part even when its x is not (N, C, ...): the shape check that follows throws alike.
  const AgreedLayout mine{x.defined() && x.ndim() >= 2 ? x.shape()[1] : 0, x.defined() ? x.dtype() : Dtype::float32};
  if (comm.options().check_sizes && (mine.channels != agreed.channels || mine.dtype != agreed.dtype)) {
    require_same_values(mpi_comm(comm), {mine.channels, static_cast<int64_t>(mine.dtype)}, {"channel count", "dtype"},
                        "multi_node_batch_normalization", [](size_t i, int64_t v) {
                          return i == 0 ? std::to_string(v) : dtype_name(static_cast<Dtype>(v));
                        });
    agreed = mine;
  }
  return functions::split_batch_normalization(
      x, gamma, beta,
      [comm](const Variable& part) { return sum_across_ranks(part, comm, LayoutCheck::agreed_by_caller); }, eps,
      activation, residual);
}

}  // namespace kusari::distributed
