#pragma once
// ReduceOp: how Communicator::allreduce combines the ranks' elements.

#include <kusari/core/api.h>

namespace kusari::distributed {

// Elementwise reduction across ranks.
enum class ReduceOp { sum, prod, max, min };

// "sum", "prod", "max" or "min".
KUSARI_API const char* reduce_op_name(ReduceOp op);

}  // namespace kusari::distributed
