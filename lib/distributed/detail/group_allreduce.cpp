// The papers' all-reduces composed of group collectives (detail/group_allreduce.h).

#include <kusari/distributed/detail/group_allreduce.h>

#include <algorithm>

#include <kusari/distributed/detail/mpi_util.h>
#include <kusari/distributed/detail/ring.h>
#include <kusari/kernels/routines.h>

namespace kusari::distributed {
namespace {

// One group per color over the ranks of `comm`: color c's ranks in the order of its ring (color_order, as
// multi_color_allreduce.cpp's rings).
std::vector<std::unique_ptr<CollectiveGroup>> color_groups(MPI_Comm comm, int colors, const GroupMaker& make_group) {
  const int size = comm_size(comm), rank = comm_rank(comm);
  std::vector<std::unique_ptr<CollectiveGroup>> groups;
  for (int color = 0; color < colors; ++color) {
    const std::vector<int> order = color_order(size, color, colors);
    const int position = static_cast<int>(std::find(order.begin(), order.end(), rank) - order.begin());
    CommHandle ordered;
    check_mpi(MPI_Comm_split(comm, 0, position, ordered.out()), "MPI_Comm_split");
    groups.push_back(make_group(ordered.get()));
  }
  return groups;
}

// Sums `array` over every rank with the node's ranks first: a reduce-scatter inside the node leaves
// this rank one slice of the node's sum (array padded with zeros to a multiple of the node's ranks),
// sum_slice sums it with the ranks holding it on the other nodes, and an all-gather inside the node
// returns every slice.
void within_nodes(CollectiveGroup& intra, const Array& array, const std::function<void(const Array&)>& sum_slice) {
  const int64_t n = array.size(), ranks = intra.size();
  const int64_t slice = (n + ranks - 1) / ranks;
  const bool exact = slice * ranks == n;
  const Array padded =
      exact ? array
            : ops::concatenate({array, Array::zeros({slice * ranks - n}, array.dtype(), array.device())}, 0);
  const Array mine = Array::empty({slice}, array.dtype(), array.device());
  intra.reduce_scatter_sum(padded, mine);
  sum_slice(mine);
  intra.allgather(mine, padded);
  if (!exact) array.assign(padded.get_item({Slice{0, n}}));
}

// Sums `array` over the ranks of the color groups, color c summing share c of colors.size() (cut at
// n·c/colors), all at once.
void sum_colors(const std::vector<std::unique_ptr<CollectiveGroup>>& colors, const Array& array) {
  const int64_t n = array.size(), count = static_cast<int64_t>(colors.size());
  std::vector<CollectiveGroup*> groups;
  std::vector<Array> shares;
  for (int64_t c = 0; c < count; ++c) {
    groups.push_back(colors[static_cast<size_t>(c)].get());
    shares.push_back(array.get_item({Slice{n * c / count, n * (c + 1) / count}}));
  }
  groups[0]->allreduce_sums_at_once(groups, shares);
}

}  // namespace

AllreduceGroups make_allreduce_groups(const std::string& name, const CommunicatorOptions& options,
                                      const CommGroups& comms, const GroupMaker& make_group) {
  AllreduceGroups groups;
  const Topology& topology = comms.topology();
  if (name == "flat" || name == "nccl" || name == "hybrid") groups.all = make_group(comms.all());
  if (name == "hierarchical" || name == "two_dimensional" || name == "hybrid" ||
      (name == "multi_color" && colors_between_nodes(topology))) {
    groups.intra = make_group(comms.intra());
  }
  // hierarchical sums across nodes on the nodes' first ranks only; each inter-node communicator is whole
  // ranks of one intra-node rank, so a group is made by all of its ranks or by none.
  if (name == "two_dimensional" || ((name == "hierarchical" || name == "hybrid") && topology.intra_rank == 0)) {
    groups.inter = make_group(comms.inter());
  }
  if (name == "multi_color") {
    groups.colors = color_groups(colors_between_nodes(topology) ? comms.inter() : comms.all(), options.colors,
                                 make_group);
  }
  return groups;
}

void allreduce_over_groups(NcclPattern pattern, const AllreduceGroups& groups, const Array& array) {
  switch (pattern) {
    case NcclPattern::all:
      groups.all->allreduce_sum(array, array);
      return;
    case NcclPattern::hierarchical:
      groups.intra->reduce_sum(array, array, 0);
      if (groups.inter) groups.inter->allreduce_sum(array, array);  // the node's first rank
      groups.intra->broadcast(array, 0);
      return;
    case NcclPattern::two_dimensional:
      within_nodes(*groups.intra, array, [&](const Array& slice) { groups.inter->allreduce_sum(slice, slice); });
      return;
    case NcclPattern::multi_color:
      if (!groups.intra) return sum_colors(groups.colors, array);
      within_nodes(*groups.intra, array, [&](const Array& slice) { sum_colors(groups.colors, slice); });
      return;
  }
}

void max_over_groups(NcclPattern pattern, const AllreduceGroups& groups, const Array& array) {
  switch (pattern) {
    case NcclPattern::all:
      groups.all->allreduce_max(array, array);
      return;
    case NcclPattern::hierarchical:  // across the nodes on their first ranks only, as the sum goes
      groups.intra->allreduce_max(array, array);
      if (groups.inter) groups.inter->allreduce_max(array, array);
      groups.intra->broadcast(array, 0);
      return;
    case NcclPattern::two_dimensional:
      groups.intra->allreduce_max(array, array);
      groups.inter->allreduce_max(array, array);
      return;
    case NcclPattern::multi_color:  // each color spans every node (or every rank)
      if (groups.intra) groups.intra->allreduce_max(array, array);
      groups.colors[0]->allreduce_max(array, array);
      return;
  }
}

}  // namespace kusari::distributed
