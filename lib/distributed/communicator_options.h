#pragma once
// CommunicatorOptions: the settings of a Communicator and its all-reduce algorithm.

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/dtype.h>

namespace kusari::distributed {

// Where allreduce_grad divides by the number of ranks P, around the rounding to the wire dtype: each
// contribution is multiplied by a prescale before it is rounded and summed, the sum by a postscale after.
enum class AveragingPolicy {
  automatic,      // float16: a power of two agreed per all-reduce (one 4-byte all-reduce more) that keeps every
                  // partial sum within half of float16's range and small values as far from its subnormals as
                  // that allows, the rest of 1/P after; float32 and bfloat16 (float32's range): divide_after
  divide_before,  // 1/P before: small values vanish in float16 at large P
  divide_after,   // 1/P after: large values overflow float16 at large P
  split,          // 1/sqrt(P) before and 1/sqrt(P) after
};

// Settings of create_communicator, e.g. `create_communicator("ring", {.wire_dtype = Dtype::float16})`.
struct KUSARI_API CommunicatorOptions {
  Dtype wire_dtype = Dtype::float32;          // what gradients travel as: float32, float16 or bfloat16
  AveragingPolicy averaging = AveragingPolicy::automatic;  // where allreduce_grad divides by the ranks
  int ranks_per_node = 0;                     // > 0: pretend nodes of this many ranks; 0: KUSARI_RANKS_PER_NODE, else the real nodes
  int64_t chunk_bytes = 1 << 20;              // pipelining unit of the point-to-point algorithms, in wire bytes
  int pipeline_depth = 4;                     // messages each ring keeps in flight, the one it waits for included
  int colors = 4;                             // multi_color: number of rings running at once
  int64_t hybrid_threshold_bytes = 1 << 20;   // hybrid: ring from this many wire bytes up, hierarchical below
  bool check_sizes = true;                    // compare buffer sizes across ranks first and throw on a mismatch
  bool abort_on_uncaught_exception = true;    // an uncaught exception on any rank ends the whole job (std::terminate)
};

// "automatic", "divide_before", "divide_after" or "split".
KUSARI_API const char* averaging_policy_name(AveragingPolicy policy);
// The policy called `name`; throws ValueError naming the choices otherwise.
KUSARI_API AveragingPolicy averaging_policy_from_name(const std::string& name);
// Every policy, automatic first.
KUSARI_API std::vector<AveragingPolicy> averaging_policies();

// Throws ValueError naming the first option out of its range.
KUSARI_API void check_communicator_options(const CommunicatorOptions& options);

}  // namespace kusari::distributed
