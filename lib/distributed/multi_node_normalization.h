#pragma once
// multi_node_batch_normalization: batch normalization whose statistics span every rank's batch.

#include <kusari/core/api.h>
#include <kusari/distributed/communicator.h>
#include <kusari/functions/normalization.h>

namespace kusari::distributed {

// functions::split_batch_normalization over the ranks of comm: x is this rank's part of the batch
// (local batch sizes may differ); one all-reduce of [Σx, Σx², count] in forward and one of
// [Σgy, Σgy·x̂] in backward give exactly the statistics and x-gradients of the concatenated batch,
// while the gradients of gamma and beta are this rank's share (the optimizer averages them). Every
// rank must call it and backpropagate through it in step. A defined residual is added before the
// activation, as in functions::batch_normalization. The ranks' channel counts are compared first (one
// allgather; ShapeError on every rank when they differ) unless comm's check_sizes is off; ranks that
// compute in different dtypes get DtypeError on every rank from the forward's all-reduce itself.
KUSARI_API functions::BatchNormalizationResult multi_node_batch_normalization(
               const Variable& x, const Variable& gamma, const Variable& beta, const Communicator& comm, double eps = 2e-5,
               functions::Activation activation = functions::Activation::none, const Variable& residual = Variable());

// The same for a layer, whose channel count is fixed by its gamma: the channel counts are compared
// only while `channels_agreed` is false (the first call on every rank), which the comparison then
// sets, so that forward and backward make one all-reduce each.
KUSARI_API functions::BatchNormalizationResult multi_node_batch_normalization(
               const Variable& x, const Variable& gamma, const Variable& beta, const Communicator& comm, bool& channels_agreed,
               double eps = 2e-5, functions::Activation activation = functions::Activation::none,
               const Variable& residual = Variable());

}  // namespace kusari::distributed
