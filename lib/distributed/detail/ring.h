#pragma once
// Pipelined rings: reduce-scatter and/or all-gather of part of a ReduceBuffer over point-to-point MPI,
// chunk by chunk, several rings in flight at once. Internal header (includes <mpi.h>).

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include <kusari/distributed/detail/comm_groups.h>
#include <kusari/distributed/communicator_options.h>
#include <kusari/distributed/detail/reduce_buffer.h>

namespace kusari::distributed {

// Which halves of a ring all-reduce to run.
enum class RingPhases { reduce_scatter, allgather, both };

// One ring over the ranks of comm. The range [begin, end) is cut into one segment per ring position;
// after the reduce-scatter the rank at position p holds the sum of segment (p + 1) % size.
struct RingPlan {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> order;         // ranks of comm in ring order: each sends to the next, receives from the previous
  int64_t begin = 0;              // first element of the buffer this ring sums
  int64_t end = 0;                // one past its last element
  RingPhases phases = RingPhases::both;
  void* owned = nullptr;          // wire sums of the owned segment: written by reduce_scatter, read by allgather
  int tag_base = 0;               // the ring uses tags [tag_base, tag_base + 2 * size)
  int64_t chunk_bytes = 256 << 10;  // wire bytes per message
  int depth = 4;                  // messages posted ahead of the one being processed
};

// A range of buffer elements.
struct ElementRange {
  int64_t begin = 0;
  int64_t end = 0;
};

// A ring over all ranks of comm in rank order, summing [begin, end) with the options' chunking.
RingPlan natural_ring(MPI_Comm comm, int64_t begin, int64_t end, const CommunicatorOptions& options);
// The segment this rank owns after the plan's reduce-scatter.
ElementRange owned_range(const RingPlan& plan);
// Ranks 0 .. size-1 of comm starting at `first` and going forward, or backward when `reverse`.
std::vector<int> rotated_order(int size, int first, bool reverse);
// multi_color's ring of color `color` of `colors` over `size` ranks: rotated to start at rank
// color·size/colors, backwards for odd colors, so that every rank owns a segment of some color early
// and both directions of every link carry data.
std::vector<int> color_order(int size, int color, int colors);
// Whether multi_color's colors run between nodes, inside a reduce-scatter and an all-gather in each node:
// nodes of several ranks, the same number on each (else they run over every rank).
bool colors_between_nodes(const Topology& topology);
// Runs every plan to completion, all at once; the plans' ranges must not overlap.
void run_rings(const std::vector<RingPlan>& plans, ReduceBuffer& buffer);

// Sums `buffer` over every rank in three steps: a ring reduce-scatter inside each node leaves every
// rank one slice of its node's sum, `across` sums that slice (a buffer of wire values) with the ranks
// holding the same slice on the other nodes, and a ring all-gather inside
// the node returns the whole buffer. With one node that is the node's ring all-reduce, run as one ring
// whose all-gather starts on each chunk as soon as it is summed. The node-aware half of two_dimensional
// and multi_color.
void reduce_within_nodes(ReduceBuffer& buffer, const CommGroups& groups, const CommunicatorOptions& options,
                         const std::function<void(ReduceBuffer& slice)>& across);

}  // namespace kusari::distributed
