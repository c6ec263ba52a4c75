#pragma once
// sum_across_ranks: a differentiable all-reduce.

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>
#include <kusari/distributed/communicator.h>

namespace kusari::distributed {

// Whether each sum first compares the element count and dtype across ranks (one allgather more, when
// the communicator's check_sizes is on), or trusts that the caller made the ranks agree on them.
enum class LayoutCheck { every_call, agreed_by_caller };

// The elementwise sum of every rank's x (same shape and dtype on all ranks). Differentiable: the
// gradient of each rank's x is the sum of every rank's output gradient (the gradient of the sum of
// all ranks' losses), so forward and backward are both collective and every rank must take part.
KUSARI_API Variable sum_across_ranks(const Variable& x, const Communicator& comm, LayoutCheck check = LayoutCheck::every_call);

}  // namespace kusari::distributed
