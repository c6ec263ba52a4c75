// Communicator::reduce_scatter and alltoall: the collectives that give each rank its own part.

#include <kusari/distributed/detail/communicator_impl.h>

#include <cstring>
#include <vector>

#include <kusari/distributed/detail/communicator_checks.h>
#include <kusari/distributed/detail/mpi_util.h>
#include <kusari/distributed/detail/rank_agreement.h>

namespace kusari::distributed {
namespace {

constexpr int kMetaFields = 3;  // dtype, ndim, bytes of each array alltoall sends

// Int counts and their displacements for MPI_Alltoallv; throws ValueError past INT_MAX in all.
struct Layout {
  std::vector<int> counts, offsets;
  explicit Layout(const std::vector<int64_t>& sizes) {
    int64_t total = 0;
    for (int64_t n : sizes) {
      counts.push_back(mpi_count(n, "alltoall"));
      offsets.push_back(mpi_count(total, "alltoall"));
      total += n;
    }
    mpi_count(total, "alltoall");
  }
  // One past the last element.
  int64_t total() const { return counts.empty() ? 0 : int64_t{offsets.back()} + counts.back(); }
};

}  // namespace

Array Communicator::reduce_scatter(const Array& stacked) const {
  require_host_array(stacked, "reduce_scatter");
  if (stacked.ndim() == 0 || stacked.shape()[0] != size()) {
    throw ShapeError(cat("reduce_scatter: expected a leading axis of ", size(), " (one slice per rank), got shape ",
                         stacked.shape()));
  }
  const CollectiveScope scope = impl_->scope("reduce_scatter");
  const MPI_Comm comm = impl_->groups.all();
  require_same_layout(comm, 0, stacked.size(), stacked.dtype(), "reduce_scatter", "element counts");
  const Shape slice_shape(std::vector<int64_t>(stacked.shape().begin() + 1, stacked.shape().end()));
  Array out = Array::empty(slice_shape, stacked.dtype(), Device::cpu());
  const Array work = stacked.contiguous();
  check_mpi(MPI_Reduce_scatter_block(work.host_data(), out.host_data(), mpi_count(out.size(), "reduce_scatter"),
                                     mpi_datatype(out.dtype()), mpi_op(ReduceOp::sum, out.dtype()), comm),
            "MPI_Reduce_scatter_block");
  return out;
}

std::vector<Array> Communicator::alltoall(const std::vector<Array>& arrays) const {
  const size_t n = static_cast<size_t>(size());
  if (arrays.size() != n) {
    throw ValueError(cat("alltoall: expected one array per rank (", n, "), got ", arrays.size()));
  }
  std::vector<int64_t> meta, dims;
  std::vector<int64_t> dim_counts, byte_counts;
  std::vector<Array> work;
  for (const Array& array : arrays) {
    require_host_array(array, "alltoall");
    work.push_back(array.contiguous());
    meta.insert(meta.end(), {static_cast<int64_t>(array.dtype()), array.ndim(), array.nbytes()});
    dims.insert(dims.end(), array.shape().begin(), array.shape().end());
    dim_counts.push_back(array.ndim());
    byte_counts.push_back(array.nbytes());
  }
  const CollectiveScope scope = impl_->scope("alltoall");
  const MPI_Comm comm = impl_->groups.all();
  std::vector<int64_t> in_meta(meta.size());
  check_mpi(MPI_Alltoall(meta.data(), kMetaFields, MPI_INT64_T, in_meta.data(), kMetaFields, MPI_INT64_T, comm),
            "MPI_Alltoall");
  std::vector<int64_t> in_dim_counts, in_byte_counts;
  for (size_t k = 0; k < n; ++k) {
    in_dim_counts.push_back(in_meta[k * kMetaFields + 1]);
    in_byte_counts.push_back(in_meta[k * kMetaFields + 2]);
  }

  const Layout dims_out(dim_counts), dims_in(in_dim_counts);
  std::vector<int64_t> in_dims(static_cast<size_t>(dims_in.total()));
  check_mpi(MPI_Alltoallv(dims.data(), dims_out.counts.data(), dims_out.offsets.data(), MPI_INT64_T, in_dims.data(),
                          dims_in.counts.data(), dims_in.offsets.data(), MPI_INT64_T, comm),
            "MPI_Alltoallv");
  std::vector<Array> received;
  for (size_t k = 0; k < n; ++k) {
    const auto first = in_dims.begin() + dims_in.offsets[k];
    const Shape shape(std::vector<int64_t>(first, first + dims_in.counts[k]));
    received.push_back(Array::empty(shape, static_cast<Dtype>(in_meta[k * kMetaFields]), Device::cpu()));
  }

  const Layout bytes_out(byte_counts), bytes_in(in_byte_counts);
  std::vector<std::byte> packed(static_cast<size_t>(bytes_out.total())),
      unpacked(static_cast<size_t>(bytes_in.total()));
  for (size_t k = 0; k < n; ++k) {
    if (byte_counts[k] == 0) continue;  // an empty array may have no storage at all
    std::memcpy(packed.data() + bytes_out.offsets[k], work[k].host_data(), static_cast<size_t>(byte_counts[k]));
  }
  check_mpi(MPI_Alltoallv(packed.data(), bytes_out.counts.data(), bytes_out.offsets.data(), MPI_BYTE, unpacked.data(),
                          bytes_in.counts.data(), bytes_in.offsets.data(), MPI_BYTE, comm),
            "MPI_Alltoallv");
  for (size_t k = 0; k < n; ++k) {
    if (bytes_in.counts[k] == 0) continue;
    std::memcpy(received[k].host_data(), unpacked.data() + bytes_in.offsets[k], static_cast<size_t>(bytes_in.counts[k]));
  }
  return received;
}

}  // namespace kusari::distributed
