// Collectives cut into blocks whose counts fit MPI's int.

#include <kusari/distributed/detail/collectives.h>

#include <algorithm>

#include <kusari/distributed/detail/mpi_util.h>
#include <kusari/distributed/detail/reduce_buffer.h>

namespace kusari::distributed {
void allreduce_elements(void* data, int64_t n, Dtype dtype, ReduceOp op, MPI_Comm comm) {
  const MPI_Datatype type = mpi_datatype(dtype);
  const MPI_Op mpi_reduction = mpi_op(op, dtype);
  for_each_mpi_block(n, [&](int64_t at, int count) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, advance(data, at, itemsize(dtype)), count, type, mpi_reduction, comm),
              "MPI_Allreduce");
  });
}

void reduce_elements(void* data, int64_t n, Dtype dtype, ReduceOp op, int root, MPI_Comm comm) {
  const MPI_Datatype type = mpi_datatype(dtype);
  const MPI_Op mpi_reduction = mpi_op(op, dtype);
  const bool is_root = comm_rank(comm) == root;
  for_each_mpi_block(n, [&](int64_t at, int count) {
    void* block = advance(data, at, itemsize(dtype));
    check_mpi(MPI_Reduce(is_root ? MPI_IN_PLACE : block, is_root ? block : nullptr, count, type, mpi_reduction, root,
                         comm),
              "MPI_Reduce");
  });
}

void bcast_bytes(void* data, int64_t nbytes, int root, MPI_Comm comm) {
  for_each_mpi_block(nbytes, [&](int64_t at, int count) {
    check_mpi(MPI_Bcast(advance(data, at, 1), count, MPI_BYTE, root, comm), "MPI_Bcast");
  });
}

}  // namespace kusari::distributed
