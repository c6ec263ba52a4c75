// Which NCCL message pattern serves each algorithm on CUDA arrays, and what is refused.

#include <kusari/distributed/detail/nccl_pattern.h>

#include <kusari/core/error.h>
#include <kusari/distributed/communicator.h>

namespace kusari::distributed {

NcclPattern nccl_pattern(const std::string& name, const CommunicatorOptions& options, int64_t wire_bytes) {
  if (name == "naive" || name == "ring") {
    throw ValueError(cat("communicator ", name, " on CUDA arrays: kusari's ", name,
                         " engine moves host memory and is not built on NCCL; for GPUs take nccl (NCCL's own ring or "
                         "tree), hierarchical, two_dimensional, hybrid or multi_color"));
  }
  const CommunicatorOptions defaults;
  if (options.chunk_bytes != defaults.chunk_bytes || options.pipeline_depth != defaults.pipeline_depth) {
    throw ValueError(cat("communicator ", name, " on CUDA arrays: chunk_bytes (", options.chunk_bytes,
                         ") and pipeline_depth (", options.pipeline_depth, ") pace kusari's point-to-point engines on "
                         "CPU arrays; NCCL chunks and pipelines itself: leave them at ", defaults.chunk_bytes, " and ",
                         defaults.pipeline_depth));
  }
  if (name == "hierarchical") return NcclPattern::hierarchical;
  if (name == "two_dimensional") return NcclPattern::two_dimensional;
  if (name == "multi_color") return NcclPattern::multi_color;
  if (name == "hybrid") return wire_bytes >= options.hybrid_threshold_bytes ? NcclPattern::all : NcclPattern::hierarchical;
  if (name == "flat" || name == "nccl") return NcclPattern::all;
  throw ValueError(cat("communicator ", name, " on CUDA arrays: no NCCL pattern for this algorithm"));
}

void check_cuda_communicator(const std::string& name, const CommunicatorOptions& options) {
  nccl_pattern(name, options, 0);
}

}  // namespace kusari::distributed
