#pragma once
// CommGroups: the MPI communicators a Communicator works over. Internal header (includes <mpi.h>).

#include <mpi.h>

#include <kusari/distributed/topology.h>

namespace kusari::distributed {

// Owns one MPI communicator and frees it on destruction (unless MPI was finalised first).
class CommHandle {
 public:
  CommHandle() = default;
  ~CommHandle();
  CommHandle(const CommHandle&) = delete;
  CommHandle& operator=(const CommHandle&) = delete;
  // The communicator (MPI_COMM_NULL until set).
  MPI_Comm get() const { return comm_; }
  // Where an MPI call writes the new communicator; it must be unset.
  MPI_Comm* out() { return &comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// A duplicate of the user's communicator ("all"), the ranks of this node ("intra"), and the ranks that
// hold the same intra-node rank on every node ("inter"; for intra_rank 0 these are the node leaders).
class CommGroups {
 public:
  // Collective over comm. ranks_per_node > 0 splits each shared-memory node into pretend nodes of
  // that many consecutive ranks (it must divide the ranks of every node); 0 keeps the real nodes.
  CommGroups(MPI_Comm comm, int ranks_per_node);

  // Every rank.
  MPI_Comm all() const { return all_.get(); }
  // The ranks of this node.
  MPI_Comm intra() const { return intra_.get(); }
  // The ranks with this rank's intra-node rank, one per node.
  MPI_Comm inter() const { return inter_.get(); }
  // Ranks and sizes of the three groups.
  const Topology& topology() const { return topology_; }

 private:
  CommHandle all_;
  CommHandle intra_;
  CommHandle inter_;
  Topology topology_;
};

}  // namespace kusari::distributed
