// Node discovery with MPI_Comm_split_type, optional pretend nodes, and KUSARI_RANKS_PER_NODE.

#include <cstdlib>
#include <string>

#include <kusari/distributed/detail/comm_groups.h>
#include <kusari/distributed/detail/mpi_util.h>

namespace kusari::distributed {
namespace {

// Makes comm report errors as return codes, so that they become exceptions.
void return_errors(MPI_Comm comm) {
  check_mpi(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

// Splits comm by color, ordered by key, into `out`.
void split(MPI_Comm comm, int color, int key, CommHandle& out) {
  check_mpi(MPI_Comm_split(comm, color, key, out.out()), "MPI_Comm_split");
  return_errors(out.get());
}

}  // namespace

int ranks_per_node_from_env() {
  const char* text = std::getenv("KUSARI_RANKS_PER_NODE");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value <= 0 || value > 1 << 20) {
    throw ValueError(cat("KUSARI_RANKS_PER_NODE: expected a positive integer, got \"", text, "\""));
  }
  return static_cast<int>(value);
}

CommHandle::~CommHandle() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

CommGroups::CommGroups(MPI_Comm comm, int ranks_per_node) {
  if (ranks_per_node < 0) throw ValueError(cat("ranks_per_node: expected 0 or more, got ", ranks_per_node));
  check_mpi(MPI_Comm_dup(comm, all_.out()), "MPI_Comm_dup");
  return_errors(all());
  topology_.rank = comm_rank(all());
  topology_.size = comm_size(all());

  CommHandle shared;
  check_mpi(MPI_Comm_split_type(all(), MPI_COMM_TYPE_SHARED, topology_.rank, MPI_INFO_NULL, shared.out()),
            "MPI_Comm_split_type");
  const int shared_rank = comm_rank(shared.get()), shared_size = comm_size(shared.get());
  // Every rank learns whether some node cannot be split, so that all of them throw.
  int unsplittable = ranks_per_node > 0 && shared_size % ranks_per_node != 0 ? shared_size : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &unsplittable, 1, MPI_INT, MPI_MAX, all()), "MPI_Allreduce");
  if (unsplittable > 0) {
    throw ValueError(cat("ranks_per_node: expected a divisor of the ranks on each node, got ", ranks_per_node,
                         " for a node of ", unsplittable, " ranks"));
  }
  const int group = ranks_per_node > 0 ? shared_rank / ranks_per_node : 0;
  split(shared.get(), group, shared_rank, intra_);
  topology_.intra_rank = comm_rank(intra());
  topology_.intra_size = comm_size(intra());

  split(all(), topology_.intra_rank, topology_.rank, inter_);
  // The leaders' view (node index, node count) is shared with the rest of each node.
  int node[2] = {comm_rank(inter()), comm_size(inter())};
  check_mpi(MPI_Bcast(node, 2, MPI_INT, 0, intra()), "MPI_Bcast");
  topology_.inter_rank = node[0];
  topology_.inter_size = node[1];
  int extremes[2] = {topology_.intra_size, -topology_.intra_size};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_INT, MPI_MAX, all()), "MPI_Allreduce");
  topology_.homogeneous = extremes[0] == -extremes[1];
}

}  // namespace kusari::distributed
