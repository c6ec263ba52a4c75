#pragma once
// Counts the collectives kusari makes on one MPI communicator: this header defines MPI_Allreduce,
// MPI_Allgather and MPI_Bcast in the test program, which take precedence over MPI's own for every
// caller (libkusari's too) and forward to MPI's profiling entry points (PMPI_*). Include it in one
// source file of a test program only.

#include <mpi.h>

namespace kusari::testing {

// Calls on the counted communicator since the counts were last reset.
struct MpiCallCounts {
  int allreduce = 0;
  int allgather = 0;
  int bcast = 0;
};

inline MPI_Comm counted_comm = MPI_COMM_NULL;  // the communicator whose calls are counted
inline MpiCallCounts mpi_calls;                 // reset by assigning {}

}  // namespace kusari::testing

extern "C" int MPI_Allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (comm == kusari::testing::counted_comm) ++kusari::testing::mpi_calls.allreduce;
  return PMPI_Allreduce(send, receive, count, type, op, comm);
}

extern "C" int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                             int receive_count, MPI_Datatype receive_type, MPI_Comm comm) {
  if (comm == kusari::testing::counted_comm) ++kusari::testing::mpi_calls.allgather;
  return PMPI_Allgather(send, send_count, send_type, receive, receive_count, receive_type, comm);
}

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (comm == kusari::testing::counted_comm) ++kusari::testing::mpi_calls.bcast;
  return PMPI_Bcast(buffer, count, type, root, comm);
}
