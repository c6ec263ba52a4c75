#pragma once
// require_same_parameters: checks that every rank trains the same parameter set before gradients
// are all-reduced, so that a mismatch is reported instead of hanging or mixing unrelated arrays.

#include <string>
#include <utility>
#include <vector>

#include <kusari/autograd/variable.h>
#include <kusari/distributed/communicator.h>

namespace kusari::distributed {

// Compares a hash of the parameters' names, shapes, dtypes and requires_grad flags across the ranks
// (one allgather of 8 bytes); on a mismatch every rank throws ValueError naming `op`, the first
// differing parameter and the two ranks. Collective.
void require_same_parameters(const Communicator& comm, const std::vector<std::pair<std::string, Variable>>& params,
                             const char* op);

}  // namespace kusari::distributed
