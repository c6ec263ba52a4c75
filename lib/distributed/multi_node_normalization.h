#pragma once
// multi_node_batch_normalization: batch normalization whose statistics span every rank's batch.

#include <kusari/distributed/communicator.h>
#include <kusari/functions/normalization.h>

namespace kusari::distributed {

// The channel count and input dtype the ranks last agreed on for one layer (channels -1: none yet).
struct AgreedLayout {
  int64_t channels = -1;
  Dtype dtype = Dtype::float32;
};

// functions::split_batch_normalization over the ranks of comm: x is this rank's part of the batch
// (local batch sizes may differ); one all-reduce of [Σx, Σx², count] in forward and one of
// [Σgy, Σgy·x̂] in backward give exactly the statistics and x-gradients of the concatenated batch,
// while the gradients of gamma and beta are this rank's share (the optimizer averages them). Every
// rank must call it and backpropagate through it in step. A defined residual is added before the
// activation, as in functions::batch_normalization. The ranks' channel counts and dtypes are compared
// first (one allgather; a mismatch throws on every rank), unless comm's check_sizes is off.
functions::BatchNormalizationResult multi_node_batch_normalization(
    const Variable& x, const Variable& gamma, const Variable& beta, const Communicator& comm, double eps = 2e-5,
    functions::Activation activation = functions::Activation::none, const Variable& residual = Variable());

// The same for a layer that remembers what the ranks agreed on: the channel count and dtype are
// compared only when x's differ from `agreed` (then recorded there), so that forward and backward make
// one all-reduce each. Every rank must change them together.
functions::BatchNormalizationResult multi_node_batch_normalization(
    const Variable& x, const Variable& gamma, const Variable& beta, const Communicator& comm, AgreedLayout& agreed,
    double eps = 2e-5, functions::Activation activation = functions::Activation::none,
    const Variable& residual = Variable());

}  // namespace kusari::distributed
