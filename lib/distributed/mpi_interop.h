#pragma once
// Communicators over a caller's MPI communicator. This header includes <mpi.h> (kusari.h does not).

#include <mpi.h>

#include <string>

#include <kusari/core/api.h>
#include <kusari/distributed/communicator.h>

namespace kusari::distributed {

// A communicator over the ranks of `comm` (duplicated, so that kusari's messages never meet the
// caller's); MPI must be initialised. Collective over comm.
KUSARI_API Communicator create_communicator(const std::string& name, const CommunicatorOptions& options, MPI_Comm comm);
// The MPI communicator behind `communicator` (owned by it; do not free).
KUSARI_API MPI_Comm mpi_comm(const Communicator& communicator);

}  // namespace kusari::distributed
