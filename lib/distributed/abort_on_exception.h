#pragma once
// abort_on_exception: turns an exception on one rank into the end of the whole MPI job, instead of the
// other ranks waiting forever in their next collective.

#include <functional>

#include <kusari/core/api.h>

namespace kusari::distributed {

// Runs body. If it throws, prints "kusari: rank R: <message>" ("kusari: <message>" where MPI is not
// running) to stderr and calls
// MPI_Abort(MPI_COMM_WORLD, 1), which ends every rank (or exits with status 1 when MPI is not running).
KUSARI_API void abort_on_exception(const std::function<void()>& body);
// Makes an uncaught exception (std::terminate) do the same: print "kusari: rank R: uncaught exception:
// <message>" and end the job. create_communicator calls it unless
// CommunicatorOptions::abort_on_uncaught_exception is false (ChainerMN does the same).
KUSARI_API void install_abort_on_uncaught_exception();

}  // namespace kusari::distributed
