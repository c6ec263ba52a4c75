// A program that calls MPI_Finalize itself while the stall inspector runs (KUSARI_STALL_WARNING set by
// the test): the inspector's thread must stop inside that call, and kusari must not finalize MPI again
// at exit, so every rank exits with status 0 and no error.

#include <mpi.h>

#include <cstdio>

#include <kusari/kusari.h>

int main() {
  const auto comm = kusari::distributed::create_communicator("ring");
  const kusari::Array ones = kusari::Array::ones({4});
  comm.allreduce_grad({ones});
  comm.barrier();
  MPI_Finalize();
  std::printf("rank finished after its own MPI_Finalize\n");
  return 0;
}
