// MPI initialisation on first use and finalisation at exit.

#include <kusari/distributed/mpi_session.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include <kusari/distributed/mpi_error.h>
#include <kusari/distributed/detail/mpi_launcher.h>
#include <kusari/distributed/detail/mpi_util.h>

namespace kusari::distributed {
namespace {

std::mutex init_mutex;

std::atomic<bool> finalize_skipped = false;

// Finalises MPI at exit unless someone already did, or the job is being aborted.
void finalize_at_exit() {
  if (finalize_skipped) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

void skip_mpi_finalize_at_exit() { finalize_skipped = true; }

void ensure_mpi_initialized() {
  std::lock_guard lock(init_mutex);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) throw MpiError("kusari::distributed: MPI was already finalized; it cannot be used again");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  std::atexit(finalize_at_exit);
  int size = 0;
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  const std::string problem = detail::foreign_launcher_problem(size, [](const char* name) { return std::getenv(name); });
  if (!problem.empty()) throw MpiError(problem);
}

std::string mpi_library() { return detail::mpi_library_name(); }

ThreadLevel mpi_thread_level() {
  ensure_mpi_initialized();
  int provided = 0;
  check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  switch (provided) {
    case MPI_THREAD_SINGLE: return ThreadLevel::single;
    case MPI_THREAD_FUNNELED: return ThreadLevel::funneled;
    case MPI_THREAD_SERIALIZED: return ThreadLevel::serialized;
    default: return ThreadLevel::multiple;
  }
}

int world_rank() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return -1;
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

}  // namespace kusari::distributed
