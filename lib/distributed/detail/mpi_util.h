#pragma once
// Small helpers over the MPI C API shared by the communicator and the all-reduce algorithms.
// Internal header: it includes <mpi.h>.

#include <mpi.h>

#include <algorithm>
#include <cstdint>

#include <kusari/core/dtype.h>
#include <kusari/distributed/reduce_op.h>

namespace kusari::distributed {

// Throws MpiError naming `call` with MPI's description of rc unless rc is MPI_SUCCESS.
void check_mpi(int rc, const char* call);
// n as an MPI count; throws ValueError naming op when it does not fit an int.
int mpi_count(int64_t n, const char* op);
// The MPI datatype of elements of dtype (float16 and bfloat16 travel as 16-bit words).
MPI_Datatype mpi_datatype(Dtype dtype);
// The MPI operation that applies op to elements of dtype: a predefined one, or for float16 and
// bfloat16 a user-defined one that computes in float32. Throws DtypeError for sum/prod of bool.
MPI_Op mpi_op(ReduceOp op, Dtype dtype);
// Calls body(offset, count) over [0, n) in blocks of at most 2^30 (elements or bytes), so every MPI
// call's count fits an int.
template <class Body>
void for_each_mpi_block(int64_t n, Body&& body) {
  constexpr int64_t kBlock = int64_t{1} << 30;
  for (int64_t at = 0; at < n; at += kBlock) body(at, static_cast<int>(std::min(kBlock, n - at)));
}
// This process's rank in comm.
int comm_rank(MPI_Comm comm);
// Number of ranks in comm.
int comm_size(MPI_Comm comm);

}  // namespace kusari::distributed
