#pragma once
// How a process that ends the job on an error keeps MPI from running again at exit. Internal header.

namespace kusari::distributed {

// From now on the MPI_Finalize that ensure_mpi_initialized registered for exit is skipped (MPI_Abort
// exits through the exit handlers, where finalising the aborted MPI fails an MPICH assertion).
void skip_mpi_finalize_at_exit();

}  // namespace kusari::distributed
