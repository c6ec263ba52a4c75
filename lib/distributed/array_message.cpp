// Array messages: an int64 header [dtype, ndim, extents...], then the bytes in int-sized blocks.

#include <kusari/distributed/array_message.h>

#include <algorithm>
#include <vector>

#include <kusari/distributed/mpi_error.h>
#include <kusari/distributed/mpi_util.h>
#include <kusari/distributed/reduce_buffer.h>

namespace kusari::distributed {
namespace {

constexpr int64_t kBlockBytes = int64_t{1} << 30;  // bytes per MPI call
constexpr int64_t kDtypeCount = static_cast<int64_t>(Dtype::bool_) + 1;

// Calls body(offset, count) over [0, nbytes) in blocks of at most kBlockBytes.
template <class Body>
void for_each_block(int64_t nbytes, Body&& body) {
  for (int64_t at = 0; at < nbytes; at += kBlockBytes) body(at, static_cast<int>(std::min(kBlockBytes, nbytes - at)));
}

// The shape and dtype a received header describes; throws MpiError when it is malformed.
std::pair<Shape, Dtype> parse_header(const std::vector<int64_t>& header, int source, int tag) {
  const bool sized = header.size() >= 2 && header[1] >= 0 && static_cast<int64_t>(header.size()) == 2 + header[1];
  if (!sized || header[0] < 0 || header[0] >= kDtypeCount ||
      std::any_of(header.begin() + 2, header.end(), [](int64_t extent) { return extent < 0; })) {
    throw MpiError(cat("recv: the message from rank ", source, " with tag ", tag,
                       " is not an array header (was it sent by Communicator::send?)"));
  }
  return {Shape(std::vector<int64_t>(header.begin() + 2, header.end())), static_cast<Dtype>(header[0])};
}

}  // namespace

void send_array(const Array& array, int dest, int tag, MPI_Comm comm) {
  std::vector<int64_t> header{static_cast<int64_t>(array.dtype()), array.ndim()};
  for (int64_t extent : array.shape()) header.push_back(extent);
  check_mpi(MPI_Send(header.data(), static_cast<int>(header.size()), MPI_INT64_T, dest, tag, comm), "MPI_Send");
  const Array work = array.contiguous();
  for_each_block(work.nbytes(), [&](int64_t at, int count) {
    check_mpi(MPI_Send(advance(work.raw_data(), at, 1), count, MPI_BYTE, dest, tag, comm), "MPI_Send");
  });
}

Array recv_array(int source, int tag, MPI_Comm comm) {
  MPI_Message message;
  MPI_Status status;
  check_mpi(MPI_Mprobe(source, tag, comm, &message, &status), "MPI_Mprobe");
  int length = 0;
  check_mpi(MPI_Get_count(&status, MPI_INT64_T, &length), "MPI_Get_count");
  std::vector<int64_t> header(static_cast<size_t>(std::max(length, 0)));
  check_mpi(MPI_Mrecv(header.data(), length, MPI_INT64_T, &message, MPI_STATUS_IGNORE), "MPI_Mrecv");
  const auto [shape, dtype] = parse_header(header, source, tag);
  Array out = Array::empty(shape, dtype);
  for_each_block(out.nbytes(), [&](int64_t at, int count) {
    check_mpi(MPI_Recv(advance(out.raw_data(), at, 1), count, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE),
              "MPI_Recv");
  });
  return out;
}

}  // namespace kusari::distributed
