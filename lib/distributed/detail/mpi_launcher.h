#pragma once
// Which MPI kusari was compiled against, and whether another MPI's launcher started this process: an
// mpiexec of another MPI starts N processes that each see themselves as the only rank, which would
// train N separate one-rank runs, each calling itself rank 0.

#include <functional>
#include <string>

namespace kusari::distributed::detail {

// The MPI of the headers kusari was compiled with: "MPICH 4.0.2", "Open MPI 4.1.4" (or "MPI 3.1").
std::string mpi_library_name();

// For a process whose MPI_COMM_WORLD has `world_size` ranks and whose environment `env` gives (a
// variable's value, or null), the explanation of a launch by another MPI's mpiexec that meant more
// ranks than this MPI sees (Open MPI's OMPI_COMM_WORLD_SIZE under an MPICH build, hydra's PMI_SIZE
// under an Open MPI build), naming the MPI kusari was built with and how to launch it; empty when the
// launch is consistent.
std::string foreign_launcher_problem(int world_size, const std::function<const char*(const char*)>& env);

}  // namespace kusari::distributed::detail
