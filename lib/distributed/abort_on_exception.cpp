// Reporting an uncaught exception and ending the MPI job.

#include <kusari/distributed/abort_on_exception.h>

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include <kusari/core/error.h>
#include <kusari/distributed/detail/mpi_exit.h>
#include <kusari/distributed/mpi_session.h>

namespace kusari::distributed {

void end_job_with(const std::string& line) {
  const int rank = world_rank();
  int ranks = 1;
  if (rank >= 0) MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  skip_mpi_finalize_at_exit();
  if (ranks > 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::_Exit(1);  // not exit(): this may run on any thread, or during exit itself
}

namespace {

[[noreturn]] void report_and_abort(const char* message) {
  const int rank = world_rank();
  // Without MPI running the process is on its own: no rank to name.
  end_job_with(rank >= 0 ? cat("kusari: rank ", rank, ": ", message) : cat("kusari: ", message));
}

// std::terminate's handler: the uncaught exception's message, then the end of the job.
[[noreturn]] void abort_on_terminate() {
  try {
    const std::exception_ptr uncaught = std::current_exception();
    if (!uncaught) report_and_abort("std::terminate called without an active exception");
    std::rethrow_exception(uncaught);
  } catch (const std::exception& e) {
    report_and_abort((std::string("uncaught exception: ") + e.what()).c_str());
  } catch (...) {
    report_and_abort("uncaught exception of an unknown type");
  }
}

}  // namespace

void install_abort_on_uncaught_exception() { std::set_terminate(abort_on_terminate); }

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
