#pragma once
// Lazy MPI start-up: the first communicator initialises MPI (asking for MPI_THREAD_MULTIPLE, so that
// all-reduces may run on a communication thread) and finalises it at exit.

#include <string>

#include <kusari/core/api.h>

namespace kusari::distributed {

// The thread support MPI provides (MPI_THREAD_SINGLE ... MPI_THREAD_MULTIPLE).
enum class ThreadLevel { single, funneled, serialized, multiple };

// Initialises MPI unless the program already did; when kusari initialised it, MPI_Finalize runs at
// exit. Throws MpiError if MPI was already finalised, or when another MPI's mpiexec started this
// process as one of several ranks that this MPI sees as one (the message names kusari's MPI).
KUSARI_API void ensure_mpi_initialized();
// The thread support MPI granted; initialises MPI if needed.
KUSARI_API ThreadLevel mpi_thread_level();
// The MPI kusari was built with, as "MPICH 4.0.2" or "Open MPI 4.1.4".
KUSARI_API std::string mpi_library();
// This process's rank in MPI_COMM_WORLD, or -1 while MPI is not running.
KUSARI_API int world_rank();

}  // namespace kusari::distributed
