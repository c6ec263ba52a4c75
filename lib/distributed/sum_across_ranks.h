#pragma once
// sum_across_ranks: a differentiable all-reduce.

#include <kusari/autograd/variable.h>
#include <kusari/distributed/communicator.h>

namespace kusari::distributed {

// The elementwise sum of every rank's x (same shape and dtype on all ranks). Differentiable: the
// gradient of each rank's x is the sum of every rank's output gradient (the gradient of the sum of
// all ranks' losses), so forward and backward are both collective and every rank must take part.
Variable sum_across_ranks(const Variable& x, const Communicator& comm);

}  // namespace kusari::distributed
