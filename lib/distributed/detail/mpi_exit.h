#pragma once
// How a process ends the job on an error: the line that says why, MPI_Abort, and no MPI at exit.
// Internal header.

#include <string>

namespace kusari::distributed {

// Writes `line` to stderr and ends the whole job: MPI_Abort once the launcher has had a moment to
// forward the line (killed with its proxies, it would lose it); a process on its own exits with status 1.
[[noreturn]] void end_job_with(const std::string& line);

// From now on the MPI_Finalize that ensure_mpi_initialized registered for exit is skipped (MPI_Abort
// exits through the exit handlers, where finalising the aborted MPI fails an MPICH assertion).
void skip_mpi_finalize_at_exit();

}  // namespace kusari::distributed
