// Array messages: an int64 header [dtype, extents...], then the bytes in int-sized blocks.

#include <kusari/distributed/detail/array_message.h>

#include <algorithm>
#include <vector>

#include <kusari/distributed/detail/mpi_util.h>
#include <kusari/distributed/detail/reduce_buffer.h>

namespace kusari::distributed {
void send_array(const Array& array, int dest, int tag, MPI_Comm comm) {
  std::vector<int64_t> header{static_cast<int64_t>(array.dtype())};
  for (int64_t extent : array.shape()) header.push_back(extent);
  check_mpi(MPI_Send(header.data(), static_cast<int>(header.size()), MPI_INT64_T, dest, tag, comm), "MPI_Send");
  const Array work = array.contiguous();
  for_each_mpi_block(work.nbytes(), [&](int64_t at, int count) {
    check_mpi(MPI_Send(advance(work.host_data(), at, 1), count, MPI_BYTE, dest, tag, comm), "MPI_Send");
  });
}

Array recv_array(int source, int tag, MPI_Comm comm) {
  MPI_Message message;
  MPI_Status status;
  check_mpi(MPI_Mprobe(source, tag, comm, &message, &status), "MPI_Mprobe");
  int length = 0;
  check_mpi(MPI_Get_count(&status, MPI_INT64_T, &length), "MPI_Get_count");
  std::vector<int64_t> header(static_cast<size_t>(length));
  check_mpi(MPI_Mrecv(header.data(), length, MPI_INT64_T, &message, MPI_STATUS_IGNORE), "MPI_Mrecv");
  Array out =
      Array::empty(Shape(std::vector<int64_t>(header.begin() + 1, header.end())), static_cast<Dtype>(header[0]), Device::cpu());
  for_each_mpi_block(out.nbytes(), [&](int64_t at, int count) {
    check_mpi(MPI_Recv(advance(out.host_data(), at, 1), count, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE),
              "MPI_Recv");
  });
  return out;
}

}  // namespace kusari::distributed
