#include <kusari/distributed/detail/mpi_launcher.h>

#include <charconv>
#include <cstring>

#include <mpi.h>

#include <kusari/core/error.h>

namespace kusari::distributed::detail {
namespace {

// What another MPI's launcher leaves in the environment of each process it starts, and how to avoid it.
struct ForeignLauncher {
  const char* size_variable;  // the number of processes it started
  const char* launcher;       // whose mpiexec that is
  const char* own_launcher;   // the launcher of the MPI kusari was built with
  const char* other_build;    // the meson option that builds kusari for the other MPI
};

#if defined(OPEN_MPI)
constexpr ForeignLauncher kForeign{"PMI_SIZE", "MPICH's (hydra)", "mpiexec.openmpi", "-Dmpi=mpich"};
#else
constexpr ForeignLauncher kForeign{"OMPI_COMM_WORLD_SIZE", "Open MPI's", "mpiexec.mpich", "-Dmpi=openmpi"};
#endif

}  // namespace

std::string mpi_library_name() {
#if defined(MPICH_VERSION)
  return cat("MPICH ", MPICH_VERSION);
#elif defined(OPEN_MPI)
  return cat("Open MPI ", OMPI_MAJOR_VERSION, ".", OMPI_MINOR_VERSION, ".", OMPI_RELEASE_VERSION);
#else
  return cat("MPI ", MPI_VERSION, ".", MPI_SUBVERSION);
#endif
}

std::string foreign_launcher_problem(int world_size, const std::function<const char*(const char*)>& env) {
  const char* text = env(kForeign.size_variable);
  if (world_size != 1 || text == nullptr) return "";
  int launched = 0;
  const char* end = text + std::strlen(text);
  if (std::from_chars(text, end, launched).ptr != end || launched <= 1) return "";
  return cat("kusari was built with ", mpi_library_name(), ", but ", kForeign.launcher, " mpiexec started this ",
             "process as one of ", launched, " (", kForeign.size_variable, "=", text, "), and ", mpi_library_name(),
             " sees 1 rank: every process would train alone as rank 0. Launch it with the mpiexec of ",
             mpi_library_name(), " (Debian: ", kForeign.own_launcher, "), or build kusari with ", kForeign.other_build);
}

}  // namespace kusari::distributed::detail
