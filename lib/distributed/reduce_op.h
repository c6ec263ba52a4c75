#pragma once
// ReduceOp: how Communicator::allreduce combines the ranks' elements.

namespace kusari::distributed {

// Elementwise reduction across ranks.
enum class ReduceOp { sum, prod, max, min };

// "sum", "prod", "max" or "min".
const char* reduce_op_name(ReduceOp op);

}  // namespace kusari::distributed
