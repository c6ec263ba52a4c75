// A program that calls MPI_Finalize itself while the stall inspector runs (KUSARI_STALL_WARNING set by
// the test): the inspector's thread must stop inside that call, and kusari must not finalize MPI again
// at exit, so every rank exits with status 0 and no error (and, under LeakSanitizer, no leak).

#include <mpi.h>

#include <cstdio>

#include <kusari/kusari.h>
#include <kusari/distributed/detail/stall_inspector.h>

int main() {
  {
    // Freed before MPI_Finalize, as every MPI object must be (MPI cannot free it afterwards).
    const auto comm = kusari::distributed::create_communicator("ring");
    const kusari::Array ones = kusari::Array::ones({4});
    comm.allreduce_grad({ones});
    comm.barrier();
  }
  if (!kusari::distributed::stall_inspector_running()) {
    std::fprintf(stderr, "the stall inspector is not running, so this test would show nothing\n");
    return 1;
  }
  MPI_Finalize();
  if (kusari::distributed::stall_inspector_running()) {
    std::fprintf(stderr, "the stall inspector still runs after MPI_Finalize\n");
    return 1;
  }
  std::printf("rank finished after its own MPI_Finalize\n");
  return 0;
}
