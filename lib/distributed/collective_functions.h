#pragma once
// allgather, alltoall and bcast as differentiable functions (with sum_across_ranks, the collectives a
// model split over ranks uses). Forward and backward are collective: every rank calls the function in
// the same order and every rank's backward() must pass through it, so give inputs that require a
// gradient on every rank or on none, or the ranks that do wait in backward for the others forever.

#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>
#include <kusari/distributed/communicator.h>

namespace kusari::distributed {

// Every rank's x (one shape and dtype on all ranks), in rank order. The gradient of this rank's x is the
// sum over the ranks of their outputs' gradients at index rank() (a reduce-scatter), that is the
// gradient of the sum of every rank's loss; backward is itself differentiable.
KUSARI_API std::vector<Variable> allgather(const Communicator& comm, const Variable& x);
// Sends xs[k] to rank k (one variable per rank; shapes and dtypes may differ, at most 2 GiB in all) and
// returns at index k what rank k sent here. The gradients go back the same way; backward is itself
// differentiable.
KUSARI_API std::vector<Variable> alltoall(const Communicator& comm, const std::vector<Variable>& xs);
// Root's x on every rank (x is read on root only, and may be undefined elsewhere). Root's x receives the
// sum over the ranks of the output's gradients, as a constant: backward is first-order only.
KUSARI_API Variable bcast(const Communicator& comm, const Variable& x, int root = 0);

}  // namespace kusari::distributed
