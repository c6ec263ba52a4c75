#pragma once
// Counts the MPI calls kusari makes on one MPI communicator: this header defines MPI_Allreduce,
// MPI_Allgather, MPI_Bcast and the other calls kusari's collectives and rings use (MPI_Reduce,
// MPI_Barrier, MPI_Send, MPI_Isend) in the test program, which take precedence over MPI's own for
// every caller (libkusari's too) and forward to MPI's profiling entry points (PMPI_*). Include it in
// one source file of a test program only.

#include <mpi.h>

namespace kusari::testing {

// Calls on the counted communicator while a CountMpiCalls lives.
struct MpiCallCounts {
  int allreduce = 0;
  int allgather = 0;
  int bcast = 0;
  int other = 0;  // MPI_Reduce, MPI_Barrier, MPI_Send, MPI_Isend
};

inline MPI_Comm counted_comm = MPI_COMM_NULL;
inline MpiCallCounts mpi_calls;

// Counts the calls on `comm` from construction (counts reset) to destruction.
class CountMpiCalls {
 public:
  explicit CountMpiCalls(MPI_Comm comm) {
    counted_comm = comm;
    mpi_calls = {};
  }
  ~CountMpiCalls() { counted_comm = MPI_COMM_NULL; }
  CountMpiCalls(const CountMpiCalls&) = delete;
  CountMpiCalls& operator=(const CountMpiCalls&) = delete;
};

// Adds one to `count` when comm is the counted communicator.
inline void count_call(MPI_Comm comm, int& count) {
  if (comm != MPI_COMM_NULL && comm == counted_comm) ++count;
}

}  // namespace kusari::testing

extern "C" int MPI_Allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  kusari::testing::count_call(comm, kusari::testing::mpi_calls.allreduce);
  return PMPI_Allreduce(send, receive, count, type, op, comm);
}

extern "C" int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                             int receive_count, MPI_Datatype receive_type, MPI_Comm comm) {
  kusari::testing::count_call(comm, kusari::testing::mpi_calls.allgather);
  return PMPI_Allgather(send, send_count, send_type, receive, receive_count, receive_type, comm);
}

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  kusari::testing::count_call(comm, kusari::testing::mpi_calls.bcast);
  return PMPI_Bcast(buffer, count, type, root, comm);
}

extern "C" int MPI_Reduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, int root,
                          MPI_Comm comm) {
  kusari::testing::count_call(comm, kusari::testing::mpi_calls.other);
  return PMPI_Reduce(send, receive, count, type, op, root, comm);
}

extern "C" int MPI_Barrier(MPI_Comm comm) {
  kusari::testing::count_call(comm, kusari::testing::mpi_calls.other);
  return PMPI_Barrier(comm);
}

extern "C" int MPI_Send(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  kusari::testing::count_call(comm, kusari::testing::mpi_calls.other);
  return PMPI_Send(buffer, count, type, dest, tag, comm);
}

extern "C" int MPI_Isend(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  kusari::testing::count_call(comm, kusari::testing::mpi_calls.other);
  return PMPI_Isend(buffer, count, type, dest, tag, comm, request);
}
