// Reporting an uncaught exception and ending the MPI job.

#include <kusari/distributed/abort_on_exception.h>

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include <kusari/distributed/mpi_session.h>

namespace kusari::distributed {
namespace {

[[noreturn]] void report_and_abort(const char* message) {
  const int rank = world_rank();
  std::fprintf(stderr, "kusari: rank %d: %s\n", rank, message);
  std::fflush(stderr);
  // Give the launcher a moment to forward the message before MPI_Abort tears the job down.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (rank >= 0) MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

}  // namespace

void abort_on_exception(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    report_and_abort(e.what());
  } catch (...) {
    report_and_abort("unknown exception");
  }
}

}  // namespace kusari::distributed
