#pragma once
// CommunicatorOptions: the settings of a Communicator and its all-reduce algorithm.

#include <cstdint>

#include <kusari/core/dtype.h>

namespace kusari::distributed {

// Settings of create_communicator, e.g. `create_communicator("ring", {.wire_dtype = Dtype::float16})`.
struct CommunicatorOptions {
  Dtype wire_dtype = Dtype::float32;          // what gradients travel as: float32, float16 or bfloat16
  int ranks_per_node = 0;                     // > 0: pretend nodes of this many ranks; 0: KUSARI_RANKS_PER_NODE, else the real nodes
  int64_t chunk_bytes = 1 << 20;              // pipelining unit of the point-to-point algorithms, in wire bytes
  int pipeline_depth = 4;                     // messages each ring keeps in flight ahead of the one it waits for
  int colors = 4;                             // multi_color: number of rings running at once
  int64_t hybrid_threshold_bytes = 1 << 20;   // hybrid: ring from this many wire bytes up, hierarchical below
  bool check_sizes = true;                    // compare buffer sizes across ranks first and throw on a mismatch
};

// Throws ValueError naming the first option out of its range.
void check_communicator_options(const CommunicatorOptions& options);

}  // namespace kusari::distributed
