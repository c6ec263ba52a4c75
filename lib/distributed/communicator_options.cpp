// Range checks of CommunicatorOptions.

#include <kusari/distributed/communicator_options.h>

#include <kusari/distributed/detail/wire_format.h>

namespace kusari::distributed {

const char* averaging_policy_name(AveragingPolicy policy) {
  switch (policy) {
    case AveragingPolicy::automatic: return "automatic";
    case AveragingPolicy::divide_before: return "divide_before";
    case AveragingPolicy::divide_after: return "divide_after";
    case AveragingPolicy::split: return "split";
  }
  throw ValueError(cat("averaging_policy_name: unknown policy ", static_cast<int>(policy)));
}

std::vector<AveragingPolicy> averaging_policies() {
  return {AveragingPolicy::automatic, AveragingPolicy::divide_before, AveragingPolicy::divide_after,
          AveragingPolicy::split};
}

AveragingPolicy averaging_policy_from_name(const std::string& name) {
  for (AveragingPolicy policy : averaging_policies()) {
    if (name == averaging_policy_name(policy)) return policy;
  }
  throw ValueError(cat("averaging policy: expected automatic, divide_before, divide_after or split, got '", name, "'"));
}

void check_communicator_options(const CommunicatorOptions& options) {
  wire::check_wire_dtype(options.wire_dtype, "CommunicatorOptions::wire_dtype");
  if (options.ranks_per_node < 0) {
    throw ValueError(cat("CommunicatorOptions::ranks_per_node: expected 0 or more, got ", options.ranks_per_node));
  }
  if (options.chunk_bytes < 64) {
    throw ValueError(cat("CommunicatorOptions::chunk_bytes: expected at least 64, got ", options.chunk_bytes));
  }
  if (options.pipeline_depth < 1) {
    throw ValueError(cat("CommunicatorOptions::pipeline_depth: expected at least 1, got ", options.pipeline_depth));
  }
  if (options.colors < 1) throw ValueError(cat("CommunicatorOptions::colors: expected at least 1, got ", options.colors));
  if (options.hybrid_threshold_bytes < 0) {
    throw ValueError(cat("CommunicatorOptions::hybrid_threshold_bytes: expected 0 or more, got ",
                         options.hybrid_threshold_bytes));
  }
}

}  // namespace kusari::distributed
