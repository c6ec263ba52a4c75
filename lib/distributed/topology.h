#pragma once
// Topology: where one process sits among the ranks of a communicator, its node and the nodes.

#include <kusari/core/api.h>

namespace kusari::distributed {

// Ranks of a communicator, grouped by node (the ranks sharing memory, or pretend nodes of
// ranks_per_node ranks each so that hierarchical algorithms can be exercised on one machine).
struct KUSARI_API Topology {
  int rank = 0;             // rank in the communicator
  int size = 1;             // number of ranks
  int intra_rank = 0;       // rank inside this node
  int intra_size = 1;       // ranks on this node
  int inter_rank = 0;       // index of this node
  int inter_size = 1;       // number of nodes
  bool homogeneous = true;  // true when every node holds the same number of ranks
};

// The value of KUSARI_RANKS_PER_NODE, 0 when unset; throws ValueError unless it is a positive integer.
KUSARI_API int ranks_per_node_from_env();

}  // namespace kusari::distributed
