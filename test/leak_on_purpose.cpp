// Leaks on purpose, for test/expect_leak.sh: shows that LeakSanitizer, with test/sanitizer_leaks.supp,
// still reports memory of kusari's that is lost inside an OpenMP worker or inside an MPI call.
//   leak_on_purpose openmp   leaks a block in a parallel_for body run by OpenMP's threads
//   leak_on_purpose mpi      leaks a block in a reduction operator that MPI_Allreduce calls
// Built only with AddressSanitizer.

#include <cstdio>
#include <cstring>

#include <mpi.h>

#include <kusari/core/parallel.h>

namespace {

// Where the leaked blocks are kept until the program loses them.
void* volatile leaked = nullptr;

// Allocates a block and forgets the previous one: every call but the last loses memory.
__attribute__((noinline)) void lose_a_block_of_kusari() { leaked = new char[4096]; }

// An MPI reduction operator (a sum) that loses a block each time MPI calls it.
void leaking_sum(void* in, void* inout, int* count, MPI_Datatype*) {
  lose_a_block_of_kusari();
  for (int i = 0; i < *count; ++i) static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "openmp") != 0 && std::strcmp(argv[1], "mpi") != 0)) {
    std::fprintf(stderr, "usage: %s openmp|mpi\n", argv[0]);
    return 2;
  }
  if (std::strcmp(argv[1], "openmp") == 0) {
    kusari::set_num_threads(2);
    kusari::parallel_for(64, 1, [](int64_t, int64_t) { lose_a_block_of_kusari(); });
  } else {
    MPI_Init(&argc, &argv);
    MPI_Op op;
    MPI_Op_create(leaking_sum, 1, &op);
    int one = 1, sum = 0;
    // MPICH calls the operator from inside its own frames.
    MPI_Reduce_local(&one, &sum, 1, MPI_INT, op);
    MPI_Reduce_local(&one, &sum, 1, MPI_INT, op);
    MPI_Op_free(&op);
    MPI_Finalize();
  }
  leaked = nullptr;
  return 0;
}
