#pragma once
// MPI collectives over host buffers of any length (cut into int-sized calls). Internal header.

#include <mpi.h>

#include <cstdint>

#include <kusari/core/dtype.h>
#include <kusari/distributed/reduce_op.h>

namespace kusari::distributed {

// Reduces n elements of dtype at data across comm in place (float16/bfloat16 computed in float32).
void allreduce_elements(void* data, int64_t n, Dtype dtype, ReduceOp op, MPI_Comm comm);
// Reduces n elements of dtype at data across comm into the root's data (others' data is unchanged).
void reduce_elements(void* data, int64_t n, Dtype dtype, ReduceOp op, int root, MPI_Comm comm);
// Broadcasts nbytes bytes at data from root.
void bcast_bytes(void* data, int64_t nbytes, int root, MPI_Comm comm);

}  // namespace kusari::distributed
