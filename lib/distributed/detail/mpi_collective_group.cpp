// The collectives of a group over MPI on host arrays (detail/mpi_collective_group.h).

#include <kusari/distributed/detail/mpi_collective_group.h>

#include <initializer_list>

#include <kusari/core/error.h>
#include <kusari/distributed/detail/mpi_util.h>
#include <kusari/distributed/detail/reduce_buffer.h>

namespace kusari::distributed {
namespace {

// Throws unless every array is a contiguous host array of `first`'s dtype, one MPI sums.
void require_operands(std::initializer_list<const Array*> arrays, const char* what) {
  const Array& first = **arrays.begin();
  if (!is_floating(first.dtype())) {
    throw DtypeError(cat(what, ": expected float32, float64, float16 or bfloat16 arrays, got ", first.dtype()));
  }
  for (const Array* a : arrays) {
    if (!(a->device() == Device::cpu()) || !a->is_contiguous() || a->dtype() != first.dtype()) {
      throw ValueError(cat(what, ": expected contiguous ", first.dtype(), " arrays in host memory, got a ", a->dtype(),
                           a->is_contiguous() ? "" : " strided", " array on ", a->device()));
    }
  }
}

// Throws ShapeError unless `got` elements are the `expected` the collective needs.
void require_size(int64_t got, int64_t expected, const char* what, const char* which) {
  if (got != expected) throw ShapeError(cat(what, ": expected ", expected, " elements in ", which, ", got ", got));
}

}  // namespace

MpiCollectiveGroup::MpiCollectiveGroup(MPI_Comm comm) {
  check_mpi(MPI_Comm_dup(comm, comm_.out()), "MPI_Comm_dup");
  size_ = comm_size(comm_.get());
  rank_ = comm_rank(comm_.get());
}

void MpiCollectiveGroup::allreduce(const Array& sent, const Array& received, ReduceOp op) {
  constexpr const char* what = "MPI_Allreduce";
  require_operands({&sent, &received}, what);
  require_size(received.size(), sent.size(), what, "the result");
  if (received.host_data() != sent.host_data()) received.assign(sent);
  const MPI_Datatype type = mpi_datatype(sent.dtype());
  const MPI_Op mpi_reduction = mpi_op(op, sent.dtype());
  for_each_mpi_block(received.size(), [&](int64_t at, int count) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, advance(received.host_data(), at, itemsize(sent.dtype())), count, type,
                            mpi_reduction, comm_.get()),
              what);
  });
}

void MpiCollectiveGroup::allreduce_sum(const Array& sent, const Array& received) {
  allreduce(sent, received, ReduceOp::sum);
}

void MpiCollectiveGroup::allreduce_max(const Array& sent, const Array& received) {
  allreduce(sent, received, ReduceOp::max);
}

void MpiCollectiveGroup::reduce_sum(const Array& sent, const Array& received, int root) {
  constexpr const char* what = "MPI_Reduce";
  require_operands({&sent, &received}, what);
  require_size(received.size(), sent.size(), what, "the result");
  const bool is_root = rank_ == root;
  if (is_root && received.host_data() != sent.host_data()) received.assign(sent);
  const MPI_Datatype type = mpi_datatype(sent.dtype());
  const MPI_Op sum = mpi_op(ReduceOp::sum, sent.dtype());
  const size_t item = itemsize(sent.dtype());
  for_each_mpi_block(sent.size(), [&](int64_t at, int count) {
    // The root sums into `received` in place; the others only send.
    void* block = advance(is_root ? received.host_data() : sent.host_data(), at, item);
    check_mpi(MPI_Reduce(is_root ? MPI_IN_PLACE : block, is_root ? block : nullptr, count, type, sum, root, comm_.get()),
              what);
  });
}

void MpiCollectiveGroup::broadcast(const Array& array, int root) {
  constexpr const char* what = "MPI_Bcast";
  require_operands({&array}, what);
  for_each_mpi_block(array.nbytes(), [&](int64_t at, int count) {
    check_mpi(MPI_Bcast(advance(array.host_data(), at, 1), count, MPI_BYTE, root, comm_.get()), what);
  });
}

void MpiCollectiveGroup::reduce_scatter_sum(const Array& sent, const Array& received) {
  constexpr const char* what = "MPI_Reduce_scatter_block";
  require_operands({&sent, &received}, what);
  require_size(sent.size(), received.size() * size_, what, "the sent array (ranks times the slice)");
  const int64_t slice = received.size();
  const Array by_rank = sent.reshape({size_, slice});
  const MPI_Datatype type = mpi_datatype(sent.dtype());
  const MPI_Op sum = mpi_op(ReduceOp::sum, sent.dtype());
  for_each_mpi_block(slice, [&](int64_t at, int count) {
    // This block of every rank's slice, end to end (the whole array when one block holds a slice).
    const Array blocks = count == slice ? sent : by_rank.get_item({Slice{}, Slice{at, at + count}}).copy();
    check_mpi(MPI_Reduce_scatter_block(blocks.host_data(), advance(received.host_data(), at, itemsize(sent.dtype())),
                                       count, type, sum, comm_.get()),
              what);
  });
}

void MpiCollectiveGroup::allgather(const Array& sent, const Array& received) {
  constexpr const char* what = "MPI_Allgather";
  require_operands({&sent, &received}, what);
  require_size(received.size(), sent.size() * size_, what, "the result (ranks times the sent array)");
  const int64_t part = sent.size();
  const Array by_rank = received.reshape({size_, part});
  const MPI_Datatype type = mpi_datatype(sent.dtype());
  for_each_mpi_block(part, [&](int64_t at, int count) {
    const void* block = advance(sent.host_data(), at, itemsize(sent.dtype()));
    if (count == part) {
      check_mpi(MPI_Allgather(block, count, type, received.host_data(), count, type, comm_.get()), what);
      return;
    }
    // This block of every rank's part, gathered end to end and then put in its place.
    const Array gathered = Array::empty({size_, count}, sent.dtype(), Device::cpu());
    check_mpi(MPI_Allgather(block, count, type, gathered.host_data(), count, type, comm_.get()), what);
    by_rank.get_item({Slice{}, Slice{at, at + count}}).assign(gathered);
  });
}

void MpiCollectiveGroup::allreduce_sums_at_once(const std::vector<CollectiveGroup*>& groups,
                                                const std::vector<Array>& shares) {
  constexpr const char* what = "MPI_Iallreduce";
  if (groups.size() != shares.size() || groups.empty() || groups[0] != this) {
    throw ValueError(cat(what, ": expected this group first and one share per group, got ", groups.size(),
                         " groups and ", shares.size(), " shares"));
  }
  std::vector<MPI_Request> requests;
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto* group = dynamic_cast<const MpiCollectiveGroup*>(groups[i]);
    if (!group) throw ValueError(cat(what, ": group ", i, " is not an MPI group"));
    const Array& share = shares[i];
    require_operands({&share}, what);
    const MPI_Datatype type = mpi_datatype(share.dtype());
    const MPI_Op sum = mpi_op(ReduceOp::sum, share.dtype());
    for_each_mpi_block(share.size(), [&](int64_t at, int count) {
      requests.emplace_back();
      check_mpi(MPI_Iallreduce(MPI_IN_PLACE, advance(share.host_data(), at, itemsize(share.dtype())), count, type, sum,
                               group->comm_.get(), &requests.back()),
                what);
    });
  }
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

}  // namespace kusari::distributed
